import AppStoreModels
import AppStoreTrust
import Entitlements
import Foundation
import HTTPServer
import Storage

/// Ingests App Store Server Notifications for one app: V2 (`{"signedPayload": …}`, verified
/// with the app's roots, bundle id, appAppleId and environment) and V1 (recognised by shape,
/// its `password` compared in constant time with the app's shared secret).
///
/// One `store.write` per notification: insert the notification (a duplicate stops there),
/// insert its facts, find the owning customer (by original transaction, or by app account
/// token, which claims it), re-evaluate that customer, save the state, append the events and
/// queue their webhooks. The caller answers 200 only after that commit. A payload that fails
/// verification is recorded in the audit log (rule, size and hash, never the payload's
/// secrets) and answered 400; a check that could not be made (OCSP) or a database failure 503.
/// - Note: Immutable and `Sendable`; handles any number of notifications concurrently.
public struct NotificationIngestor: Sendable {
    /// What happened to an accepted notification.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// Facts stored and the owning customer re-evaluated.
        case applied
        /// Facts stored; no customer owns the purchase yet.
        case unclaimed
        /// Recorded only (TEST, SUMMARY, CONSUMPTION_REQUEST, …: no customer facts).
        case recorded
        /// Already ingested: nothing changed.
        case duplicate
    }

    /// The answer for an accepted notification.
    /// - Note: Immutable value; `Sendable`.
    public struct Result: Sendable, Hashable, Codable {
        public var outcome: Outcome
        public var notificationType: String
        public var notificationId: String
    }

    let store: any Store
    let verifiers: AppVerifiers
    let metrics: ServerMetrics
    let clock: ServerClock

    public init(store: any Store, verifiers: AppVerifiers, metrics: ServerMetrics, clock: ServerClock) {
        self.store = store
        self.verifiers = verifiers
        self.metrics = metrics
        self.clock = clock
    }

    /// Ingests one request body for `app`. Throws `HTTPError` with the status to answer.
    public func ingest(app: AppRecord, body: Data) async throws -> Result {
        guard case .object(let object)? = try? AppStoreJSON.decode(JSONValue.self, from: body) else {
            throw HTTPError.badRequest("The body is not a JSON object.", code: "invalid_json")
        }
        if case .string(let signedPayload)? = object["signedPayload"] {
            return try await ingestV2(app: app, signedPayload: signedPayload)
        }
        if object["notification_type"] != nil {
            return try await ingestV1(app: app, body: body, object: object)
        }
        throw HTTPError.badRequest(
            "Neither a V2 notification ({\"signedPayload\": …}) nor a V1 notification body.",
            code: "unrecognized_notification")
    }

    // MARK: V2

    private func ingestV2(app: AppRecord, signedPayload: String) async throws -> Result {
        let now = clock.now()
        let environment = Self.claimedEnvironment(signedPayload).flatMap { app.environments.contains($0) ? $0 : nil }
        guard let environment = environment ?? app.environments.first else {
            throw HTTPError(status: .conflict, code: "app_not_configured", message: "The app accepts no environment.")
        }
        let verified: VerifiedNotification
        do {
            verified = try verifiers.verifier(for: app, environment: environment)
                .verifyAndDecodeNotificationContents(signedPayload)
        } catch {
            try await reject(app: app, payload: signedPayload, rule: error.rule.rawValue, now: now)
            throw ErrorMapping.trustFailure(error)
        }
        let payload = verified.notification.payload
        let type = payload.notificationType?.rawValue ?? "UNKNOWN"
        guard let uuid = payload.notificationUUID, let signedDate = payload.signedDate else {
            try await reject(app: app, payload: signedPayload, rule: "notification.missingField", now: now)
            throw HTTPError.badRequest(
                "The notification lacks notificationUUID or signedDate.", code: "invalid_notification")
        }
        let facts: [Fact]
        do {
            facts = try Fact.facts(
                notification: payload, transaction: verified.transaction?.payload,
                renewalInfo: verified.renewalInfo?.payload)
        } catch {
            try await reject(app: app, payload: signedPayload, rule: "notification.\(error.code.rawValue)", now: now)
            throw HTTPError.badRequest("The notification's contents are incomplete.", code: "invalid_notification")
        }
        let transactionFact = facts.lazy.compactMap { if case .transaction(let value) = $0 { value } else { nil } }
            .first
        let renewalFact = facts.lazy.compactMap { if case .renewalInfo(let value) = $0 { value } else { nil } }.first
        let notificationFact = facts.lazy.compactMap { if case .notification(let value) = $0 { value } else { nil } }
            .first
        let originalTransactionId = transactionFact?.originalTransactionId ?? renewalFact?.originalTransactionId
        let notification = NewNotification(
            appId: app.id, notificationUUID: uuid, type: type, subtype: payload.subtype?.rawValue,
            environment: payload.data?.environment?.value ?? environment, originalTransactionId: originalTransactionId,
            signedDate: signedDate, signedPayload: signedPayload, fact: notificationFact, receivedAt: now)
        let transactionJWS = verified.transaction?.jws
        let renewalJWS = verified.renewalInfo?.jws
        let appAccountToken = verified.transaction?.payload.appAccountToken?.uuidString.lowercased()
        let settings = AppSettings(record: app.settings)
        let queueConsumption =
            type == NotificationTypeV2.consumptionRequest.rawValue && settings.answerConsumptionRequests
        let factEnvironment = transactionFact?.environment ?? renewalFact?.environment ?? environment
        let appId = app.id
        let outcome: Outcome
        do {
            outcome = try await timed(metrics, "ingest_notification") {
                try await store.write(retries: 2) { transaction in
                    guard case .inserted(let notificationRow) = try transaction.insertNotification(notification) else {
                        return Outcome.duplicate
                    }
                    if let transactionFact {
                        _ = try transaction.insertTransaction(
                            NewTransaction(
                                appId: appId, jws: transactionJWS, fact: transactionFact, source: "notification",
                                receivedAt: now))
                    }
                    if let renewalFact {
                        _ = try transaction.insertRenewalInfo(
                            NewRenewalInfo(
                                appId: appId, jws: renewalJWS, fact: renewalFact, source: "notification",
                                receivedAt: now))
                    }
                    if queueConsumption {
                        let job: JSONValue = .object([
                            "appId": .string(appId), "notificationUUID": .string(uuid),
                            "originalTransactionId": originalTransactionId.map(JSONValue.string) ?? .null,
                            "transactionId": transactionFact.map { .string($0.transactionId) } ?? .null,
                        ])
                        _ = try transaction.enqueueJob(
                            kind: "consumption_request",
                            payload: String(decoding: AppStoreJSON.encode(job), as: UTF8.self),
                            runAt: now, dedupeKey: "consumption_request:\(uuid)", at: now)
                    }
                    var outcome = Outcome.recorded
                    if let originalTransactionId {
                        if let owner = try CustomerIdentity.owner(
                            appId: appId, originalTransactionId: originalTransactionId,
                            appAccountToken: appAccountToken,
                            in: transaction, now: now)
                        {
                            try CustomerStateUpdater.update(
                                customer: owner, environment: factEnvironment, in: transaction, now: now)
                            try CustomerStateUpdater.updateSharers(
                                appId: appId, originalTransactionId: originalTransactionId,
                                environment: factEnvironment, in: transaction, now: now)
                            outcome = .applied
                        } else {
                            outcome = .unclaimed
                        }
                    }
                    try transaction.finishNotification(id: notificationRow, outcome: outcome.rawValue, at: now)
                    return outcome
                }
            }
        } catch {
            metrics.recordNotification(type: type, outcome: "error")
            throw ErrorMapping.storeFailure(error)
        }
        metrics.recordNotification(type: type, outcome: outcome.rawValue)
        return Result(outcome: outcome, notificationType: type, notificationId: uuid)
    }

    /// The environment a V2 payload claims, read before verification only to choose the
    /// verifier (which then checks the claim).
    static func claimedEnvironment(_ signedPayload: String) -> AppStoreEnvironment? {
        let parts = signedPayload.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]),
            let payload = try? AppStoreJSON.decode(ResponseBodyV2DecodedPayload.self, from: Data(bytes))
        else { return nil }
        return payload.data?.environment?.value ?? payload.summary?.environment?.value
            ?? payload.appData?.environment?.value
    }

    // MARK: V1

    private func ingestV1(app: AppRecord, body: Data, object: [String: JSONValue]) async throws -> Result {
        let now = clock.now()
        let decoded: ResponseBodyV1
        do {
            decoded = try AppStoreJSON.decode(ResponseBodyV1.self, from: body)
        } catch {
            throw HTTPError.badRequest(
                "The V1 notification does not match Apple's schema.", code: "invalid_notification")
        }
        var redacted = object
        if redacted["password"] != nil { redacted["password"] = .string("<redacted>") }
        let stored = String(decoding: AppStoreJSON.encode(JSONValue.object(redacted)), as: UTF8.self)
        guard let secret = app.sharedSecret, let password = decoded.password,
            Digest.constantTimeEqual(Array(password.utf8), Array(secret.utf8))
        else {
            try await reject(app: app, payload: stored, rule: "v1.passwordMismatch", now: now)
            throw HTTPError(
                status: .unauthorized, code: "shared_secret_mismatch",
                message: "The V1 notification's password does not match the app's shared secret.")
        }
        guard decoded.bid == nil || decoded.bid == app.bundleId else {
            try await reject(app: app, payload: stored, rule: TrustRule.bundleIdMismatch.rawValue, now: now)
            throw ErrorMapping.trustFailure(TrustError(.bundleIdMismatch, "V1 bid does not match"))
        }
        let environment =
            decoded.environment?.value?.appStoreEnvironment ?? decoded.unifiedReceipt?.environment?.value ?? .production
        guard app.environments.contains(environment) else {
            try await reject(app: app, payload: stored, rule: TrustRule.environmentMismatch.rawValue, now: now)
            throw ErrorMapping.trustFailure(TrustError(.environmentMismatch, "V1 environment not accepted"))
        }
        let type = decoded.notificationType?.rawValue ?? "UNKNOWN"
        let notificationId = "v1:" + Digest.hex(Digest.sha256(Array(stored.utf8)))
        let transactions = LegacyFactMapping.transactions(
            decoded.unifiedReceipt?.latestReceiptInfo ?? [], environment: environment, observedAt: now)
        let renewals = LegacyFactMapping.renewals(
            decoded.unifiedReceipt?.pendingRenewalInfo ?? [], environment: environment, observedAt: now)
        let originalTransactionId =
            decoded.originalTransactionId ?? transactions.last?.originalTransactionId
            ?? renewals.first?.originalTransactionId
        let notificationFact = NotificationFact(
            legacyV1Type: type, notificationId: notificationId, observedAt: now, environment: environment,
            originalTransactionId: originalTransactionId, productId: decoded.autoRenewProductId)
        let notification = NewNotification(
            appId: app.id, notificationUUID: notificationId, type: type, subtype: nil, environment: environment,
            originalTransactionId: originalTransactionId, signedDate: now, signedPayload: stored,
            fact: notificationFact, receivedAt: now)
        let appId = app.id
        let originalIds = Array(Set(transactions.map(\.originalTransactionId) + renewals.map(\.originalTransactionId)))
            .sorted()
        let outcome: Outcome
        do {
            outcome = try await timed(metrics, "ingest_notification") {
                try await store.write(retries: 2) { transaction in
                    guard case .inserted(let row) = try transaction.insertNotification(notification) else {
                        return Outcome.duplicate
                    }
                    for fact in transactions {
                        _ = try transaction.insertTransaction(
                            NewTransaction(
                                appId: appId, jws: nil, fact: fact, source: "notification_v1", receivedAt: now))
                    }
                    for fact in renewals {
                        _ = try transaction.insertRenewalInfo(
                            NewRenewalInfo(
                                appId: appId, jws: nil, fact: fact, source: "notification_v1", receivedAt: now))
                    }
                    var outcome = originalIds.isEmpty ? Outcome.recorded : .unclaimed
                    var updated: Set<Int64> = []
                    for originalId in originalIds {
                        guard
                            let owner = try CustomerIdentity.owner(
                                appId: appId, originalTransactionId: originalId, appAccountToken: nil, in: transaction,
                                now: now), updated.insert(owner.id).inserted
                        else { continue }
                        try CustomerStateUpdater.update(
                            customer: owner, environment: environment, in: transaction, now: now)
                        try CustomerStateUpdater.updateSharers(
                            appId: appId, originalTransactionId: originalId, environment: environment,
                            in: transaction, now: now)
                        outcome = .applied
                    }
                    try transaction.finishNotification(id: row, outcome: outcome.rawValue, at: now)
                    return outcome
                }
            }
        } catch {
            metrics.recordNotification(type: type, outcome: "error")
            throw ErrorMapping.storeFailure(error)
        }
        metrics.recordNotification(type: type, outcome: outcome.rawValue)
        return Result(outcome: outcome, notificationType: type, notificationId: notificationId)
    }

    // MARK: Rejections

    /// Records a refused notification (rule, size, SHA-256; never the payload) and counts it.
    private func reject(app: AppRecord, payload: String, rule: String, now: Timestamp) async throws {
        metrics.recordVerificationFailure(rule: rule)
        metrics.recordNotification(type: "UNVERIFIED", outcome: "rejected")
        let entry = NewAuditEntry(
            at: now, actor: "appstore", action: "notification.rejected", appId: app.id,
            detail: .object([
                "rule": .string(rule), "bytes": .integer(Int64(payload.utf8.count)),
                "sha256": .string(Digest.hex(Digest.sha256(Array(payload.utf8)))),
            ]))
        do {
            _ = try await store.write { transaction in try transaction.appendAudit(entry) }
        } catch {
            throw ErrorMapping.storeFailure(error)
        }
    }
}
