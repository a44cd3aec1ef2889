import AppStoreModels
import AppStoreTrust
import Entitlements
import Foundation
import Storage

/// Ingests App Store Server Notifications for one app: V2 (`{"signedPayload": …}`, verified
/// with the app's roots, bundle id, appAppleId and environment) and V1 (recognised by shape,
/// its `password` compared in constant time with the app's shared secret).
///
/// A verified notification becomes one `FactBatch` (the notification, its transaction and
/// renewal info, a consumption job if asked for, owned by whoever owns the purchase) committed
/// by `IngestionWriter`; the caller acknowledges only after that commit. A payload that fails
/// verification is recorded in the audit log (rule, size and hash, never the payload's secrets)
/// and refused with `verificationFailed`; a check that could not be made (OCSP) or a database
/// failure is retryable.
/// - Note: Immutable and `Sendable`; handles any number of notifications concurrently.
public struct NotificationIngestor: Sendable {
    public typealias Outcome = FactCommit.Outcome

    /// The answer for an accepted notification.
    /// - Note: Immutable value; `Sendable`.
    public struct Result: Sendable, Hashable, Codable {
        public var outcome: Outcome
        public var notificationType: String
        public var notificationId: String
    }

    let writer: IngestionWriter
    let metrics: any IngestionMetrics
    let clock: ServerClock

    public init(writer: IngestionWriter, metrics: any IngestionMetrics, clock: ServerClock) {
        self.writer = writer
        self.metrics = metrics
        self.clock = clock
    }

    /// Ingests one notification body (V2 or V1, told apart by shape) for `app`.
    public func ingest(app: AppRuntime, body: Data) async throws(IngestionError) -> Result {
        if let signedPayload = Self.plainSignedPayload(in: body) {
            return try await ingest(app: app, signedPayload: signedPayload)
        }
        guard case .object(let object)? = try? AppStoreJSON.decode(JSONValue.self, from: body) else {
            throw IngestionError(.invalidJSON, "The body is not a JSON object.")
        }
        if case .string(let signedPayload)? = object["signedPayload"] {
            return try await ingest(app: app, signedPayload: signedPayload)
        }
        if object["notification_type"] != nil {
            return try await ingestV1(app: app, body: body, object: object)
        }
        throw IngestionError(
            .unrecognizedNotification,
            "Neither a V2 notification ({\"signedPayload\": …}) nor a V1 notification body.")
    }

    /// The `signedPayload` of a body that is exactly what Apple posts: one object with that one
    /// member, a string of JWS characters (base64url and dots: nothing escaped), whitespace
    /// around the tokens. Anything else is `nil` and goes through the general decoding, which
    /// gives the same answer for these bodies: decoding the 10 KB body into a `JSONValue` with
    /// Foundation was 1.7% of the POST profile.
    static func plainSignedPayload(in body: Data) -> String? {
        body.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> String? in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let open = Self.after("{", in: bytes, from: Self.afterWhitespace(in: bytes, from: 0)),
                let key = Self.after("\"signedPayload\"", in: bytes, from: Self.afterWhitespace(in: bytes, from: open)),
                let colon = Self.after(":", in: bytes, from: Self.afterWhitespace(in: bytes, from: key)),
                let start = Self.after("\"", in: bytes, from: Self.afterWhitespace(in: bytes, from: colon))
            else { return nil }
            var at = start
            while at < bytes.count, Self.isJWSCharacter(bytes[at]) { at += 1 }
            let end = at
            guard let quote = Self.after("\"", in: bytes, from: end),
                let brace = Self.after("}", in: bytes, from: Self.afterWhitespace(in: bytes, from: quote)),
                Self.afterWhitespace(in: bytes, from: brace) == bytes.count
            else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
    }

    private static func afterWhitespace(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var at = start
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x09 || bytes[at] == 0x0A || bytes[at] == 0x0D {
            at += 1
        }
        return at
    }

    /// Where `literal` ends when the bytes at `start` are it, else `nil`.
    private static func after(_ literal: StaticString, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        let count = literal.utf8CodeUnitCount
        guard start + count <= bytes.count else { return nil }
        for offset in 0..<count where bytes[start + offset] != literal.utf8Start[offset] { return nil }
        return start + count
    }

    /// base64url's alphabet and the dot between a JWS's parts. Arithmetic rather than ranges:
    /// a `switch` over ranges called `ClosedRange.contains` through its protocol for each byte.
    @inline(__always)
    static func isJWSCharacter(_ byte: UInt8) -> Bool {
        (byte | 0x20) &- UInt8(ascii: "a") < 26 || byte &- UInt8(ascii: "0") < 10 || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
    }

    // MARK: V2

    /// Ingests one V2 `signedPayload`: what Apple posts, and what Get Notification History
    /// returns, so replays go through here too.
    public func ingest(app: AppRuntime, signedPayload: String) async throws(IngestionError) -> Result {
        let now = clock.now()
        let record = app.record
        guard let environment = Self.verifyingEnvironment(of: signedPayload, among: record.environments) else {
            throw IngestionError.noEnvironment
        }
        let verified: VerifiedNotification
        do {
            verified = try app.verifier(for: environment).verifyAndDecodeNotificationContents(signedPayload)
        } catch {
            try await reject(app: record, payload: signedPayload, rule: error.rule.rawValue, now: now)
            throw IngestionError.trust(error)
        }
        let payload = verified.notification.payload
        let type = payload.notificationType?.rawValue ?? "UNKNOWN"
        guard let uuid = payload.notificationUUID, let signedDate = payload.signedDate else {
            try await reject(app: record, payload: signedPayload, rule: "notification.missingField", now: now)
            throw IngestionError(.invalidNotification, "The notification lacks notificationUUID or signedDate.")
        }
        let facts: [Fact]
        do {
            facts = try Fact.facts(
                notification: payload, transaction: verified.transaction?.payload,
                renewalInfo: verified.renewalInfo?.payload)
        } catch {
            try await reject(app: record, payload: signedPayload, rule: "notification.\(error.code.rawValue)", now: now)
            throw IngestionError(.invalidNotification, "The notification's contents are incomplete.")
        }
        var batch = Self.batch(
            appId: record.id, signedPayload: signedPayload, payload: payload, uuid: uuid, signedDate: signedDate,
            facts: facts, transactionJWS: verified.transaction?.jws, renewalInfoJWS: verified.renewalInfo?.jws,
            environment: environment, receivedAt: now)
        let originalTransactionId = batch.notification?.originalTransactionId
        let transactionFact = batch.transactions.first?.fact
        if let token = verified.transaction?.payload.appAccountToken?.uuidString.lowercased() {
            batch.appAccountTokens = [token]
        }
        if type == NotificationTypeV2.consumptionRequest.rawValue && app.settings.answerConsumptionRequests {
            let signedTransaction = verified.transaction?.payload
            let job = ConsumptionResponder.Payload(
                appId: record.id, notificationUUID: uuid, originalTransactionId: originalTransactionId,
                transactionId: transactionFact?.transactionId, environment: batch.notification?.environment,
                requestedAt: signedDate,
                purchase: signedTransaction.map {
                    ConsumedPurchase(
                        productType: $0.type?.rawValue, purchaseDate: $0.purchaseDate, expiresDate: $0.expiresDate)
                })
            batch.jobs.append(
                FactBatch.Job(
                    kind: ConsumptionResponder.kind,
                    payload: AppStoreJSON.encodeText(job),
                    dedupeKey: "consumption_request:\(uuid)"))
        }
        let result = try await commit(batch, type: type, notificationId: uuid)
        if type == NotificationTypeV2.refund.rawValue || type == NotificationTypeV2.refundDeclined.rawValue,
            let transactionId = transactionFact?.transactionId
        {
            await linkConsumptionOutcome(appId: record.id, transactionId: transactionId, outcome: type, at: now)
        }
        return result
    }

    /// The environment whose verifier checks `signedPayload`: the one it claims when the app has
    /// it, else the app's first. An app with one environment has no choice to make, so its
    /// notifications are not decoded for the claim: decoding a whole notification before
    /// verifying it (which decodes it again) was 3% of the POST workload's CPU time.
    static func verifyingEnvironment(of signedPayload: String, among environments: [AppStoreEnvironment])
        -> AppStoreEnvironment?
    {
        guard environments.count > 1 else { return environments.first }
        let claimed = UnverifiedJWS.claimedEnvironment(ofNotification: signedPayload)
        return claimed.flatMap { environments.contains($0) ? $0 : nil } ?? environments.first
    }

    /// Links Apple's refund decision to the consumption answers of the transaction (once each:
    /// a redelivered decision links nothing new) and counts it. Best effort after the commit:
    /// the decision itself is already stored as a fact, and a replay links it again if this
    /// write fails.
    private func linkConsumptionOutcome(appId: String, transactionId: String, outcome: String, at: Timestamp) async {
        let linked = try? await writer.store.write { transaction in
            try transaction.linkConsumptionOutcome(appId: appId, transactionId: transactionId, outcome: outcome, at: at)
        }
        for _ in 0..<(linked ?? 0) { metrics.recordConsumptionOutcome(outcome) }
    }

    // MARK: V1

    private func ingestV1(app: AppRuntime, body: Data, object: [String: JSONValue]) async throws(IngestionError)
        -> Result
    {
        let now = clock.now()
        let record = app.record
        let decoded: ResponseBodyV1
        do {
            decoded = try AppStoreJSON.decode(ResponseBodyV1.self, from: body)
        } catch {
            throw IngestionError(.invalidNotification, "The V1 notification does not match Apple's schema.")
        }
        var redacted = object
        if redacted["password"] != nil { redacted["password"] = .string("<redacted>") }
        let stored = AppStoreJSON.encodeText(JSONValue.object(redacted))
        guard let secret = record.sharedSecret, let password = decoded.password,
            Digest.constantTimeEqual(Array(password.utf8), Array(secret.utf8))
        else {
            try await reject(app: record, payload: stored, rule: "v1.passwordMismatch", now: now)
            throw IngestionError(
                .sharedSecretMismatch, "The V1 notification's password does not match the app's shared secret.")
        }
        guard decoded.bid == nil || decoded.bid == record.bundleId else {
            try await reject(app: record, payload: stored, rule: TrustRule.bundleIdMismatch.rawValue, now: now)
            throw IngestionError.trust(TrustError(.bundleIdMismatch, "V1 bid does not match"))
        }
        let environment =
            decoded.environment?.value?.appStoreEnvironment ?? decoded.unifiedReceipt?.environment?.value ?? .production
        guard record.environments.contains(environment) else {
            try await reject(app: record, payload: stored, rule: TrustRule.environmentMismatch.rawValue, now: now)
            throw IngestionError.trust(TrustError(.environmentMismatch, "V1 environment not accepted"))
        }
        let type = decoded.notificationType?.rawValue ?? "UNKNOWN"
        let notificationId = "v1:" + Digest.hex(Digest.sha256(Array(stored.utf8)))
        let transactions = LegacyFactMapping.transactions(
            decoded.unifiedReceipt?.latestReceiptInfo ?? [], environment: environment, observedAt: now)
        var renewals = LegacyFactMapping.renewals(
            decoded.unifiedReceipt?.pendingRenewalInfo ?? [], environment: environment, observedAt: now)
        let originalTransactionId =
            decoded.originalTransactionId ?? transactions.last?.originalTransactionId
            ?? renewals.first?.originalTransactionId
        if type == NotificationTypeV1.didChangeRenewalStatus.rawValue, let changed = decoded.autoRenewStatusChangeDate,
            changed <= now
        {
            // The change happened at Apple's `auto_renew_status_change_date_ms`, not when the
            // notification arrived (Apple retries late deliveries for days): date the snapshot
            // of the subscription it is about there, so CANCELLATION and unsubscribe detection do.
            for index in renewals.indices where renewals[index].originalTransactionId == originalTransactionId {
                renewals[index].signedDate = changed
            }
        }
        let notificationFact = NotificationFact(
            legacyV1Type: type, notificationId: notificationId, observedAt: now, environment: environment,
            originalTransactionId: originalTransactionId, productId: decoded.autoRenewProductId)
        let notification = NewNotification(
            appId: record.id, notificationUUID: notificationId, type: type, subtype: nil, environment: environment,
            originalTransactionId: originalTransactionId, signedDate: now, signedPayload: stored,
            fact: notificationFact, receivedAt: now)
        var batch = FactBatch(
            appId: record.id, receivedAt: now, environment: environment, ownership: .existingOwner,
            notification: notification)
        batch.transactions = transactions.map {
            NewTransaction(appId: record.id, jws: nil, fact: $0, source: "notification_v1", receivedAt: now)
        }
        batch.renewals = renewals.map {
            NewRenewalInfo(appId: record.id, jws: nil, fact: $0, source: "notification_v1", receivedAt: now)
        }
        return try await commit(batch, type: type, notificationId: notificationId)
    }

    /// What a verified V2 notification stores, for the owner of its purchase: the notification
    /// (its `signedPayload` as received), its transaction and renewal info with their JWS, mapped
    /// to `facts` (`Fact.facts`). `environment` stands in where the payloads name none.
    public static func batch(
        appId: String, signedPayload: String, payload: ResponseBodyV2DecodedPayload, uuid: String,
        signedDate: Timestamp, facts: [Fact], transactionJWS: String?, renewalInfoJWS: String?,
        environment: AppStoreEnvironment, receivedAt: Timestamp
    ) -> FactBatch {
        let transactionFact = facts.lazy.compactMap { if case .transaction(let value) = $0 { value } else { nil } }
            .first
        let renewalFact = facts.lazy.compactMap { if case .renewalInfo(let value) = $0 { value } else { nil } }.first
        let notificationFact = facts.lazy.compactMap { if case .notification(let value) = $0 { value } else { nil } }
            .first
        let notification = NewNotification(
            appId: appId, notificationUUID: uuid, type: payload.notificationType?.rawValue ?? "UNKNOWN",
            subtype: payload.subtype?.rawValue, environment: payload.data?.environment?.value ?? environment,
            originalTransactionId: transactionFact?.originalTransactionId ?? renewalFact?.originalTransactionId,
            signedDate: signedDate, signedPayload: signedPayload, fact: notificationFact, receivedAt: receivedAt)
        var batch = FactBatch(
            appId: appId, receivedAt: receivedAt,
            environment: transactionFact?.environment ?? renewalFact?.environment ?? environment,
            ownership: .existingOwner, notification: notification)
        if let transactionFact {
            batch.transactions.append(
                NewTransaction(
                    appId: appId, jws: transactionJWS, fact: transactionFact, source: "notification",
                    receivedAt: receivedAt))
        }
        if let renewalFact {
            batch.renewals.append(
                NewRenewalInfo(
                    appId: appId, jws: renewalInfoJWS, fact: renewalFact, source: "notification",
                    receivedAt: receivedAt))
        }
        return batch
    }

    private func commit(_ batch: FactBatch, type: String, notificationId: String) async throws(IngestionError)
        -> Result
    {
        let outcome: Outcome
        do {
            outcome = try await writer.commit(batch, operation: "ingest_notification").outcome
        } catch {
            metrics.recordNotification(type: type, outcome: "error")
            throw error
        }
        metrics.recordNotification(type: type, outcome: outcome.rawValue)
        return Result(outcome: outcome, notificationType: type, notificationId: notificationId)
    }

    // MARK: Rejections

    /// Records a refused notification (rule, size, SHA-256; never the payload) and counts it.
    private func reject(app: AppRecord, payload: String, rule: String, now: Timestamp) async throws(IngestionError) {
        metrics.recordVerificationFailure(rule: rule)
        metrics.recordNotification(type: "UNVERIFIED", outcome: "rejected")
        let entry = NewAuditEntry(
            at: now, actor: "appstore", action: "notification.rejected", appId: app.id,
            detail: .object([
                "rule": .string(rule), "bytes": .integer(Int64(payload.utf8.count)),
                "sha256": .string(Digest.hex(Digest.sha256(Array(payload.utf8)))),
            ]))
        do {
            _ = try await writer.store.write { transaction in try transaction.appendAudit(entry) }
        } catch {
            throw IngestionError.store(error)
        }
    }
}
