import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Synchronization
import Testing

/// An App Store that answers from signed payloads the test prepared.
final class FakeAppStore: AppStoreConnection {
    struct Answers: Sendable {
        var info: [String: String] = [:]
        var statuses: [String: [SignedSubscriptionState]] = [:]
        var history: [String: [String]] = [:]
        /// Signed transactions per Get Transaction History page (Apple: 20).
        var historyPageSize = 20
        /// Get Notification History, page by page (the pagination token is the page's index).
        var notificationPages: [[String]] = []
        /// The page whose request fails (503) instead of answering.
        var failingPage: Int?
        /// Transaction ids Apple answers 404 for (another environment's, say) in statuses.
        var unknown: Set<String> = []
        /// Send Consumption Information bodies received, by transaction.
        var consumption: [String: ConsumptionRequest] = [:]
    }

    let answers = Mutex(Answers())
    let calls = Mutex<[String]>([])
    /// Every Get Notification History request, as sent.
    let historyRequests = Mutex<[NotificationHistoryRequest]>([])
    /// What every call throws, while set (an outage, a refusal).
    let failure = Mutex<AppStoreClientError?>(nil)
    /// How long every call takes before answering (cancellable, as a real request is).
    let delay = Mutex<Duration?>(nil)
    /// A wait before every call that ignores cancellation, as a request queued behind the
    /// client's in-flight limit does.
    let stall = Mutex<Duration?>(nil)

    private func gate() async throws(AppStoreClientError) {
        if let stall = stall.withLock({ $0 }) {
            let nanoseconds = UInt64(stall.components.seconds) * 1_000_000_000
            await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) {
                    continuation.resume()
                }
            }
        }
        if let delay = delay.withLock({ $0 }) {
            do {
                try await Task.sleep(for: delay)
            } catch {
                throw AppStoreClientError(.cancelled, "cancelled while waiting for the fake App Store")
            }
        }
        if let failure = failure.withLock({ $0 }) { throw failure }
    }

    func subscriptionStatuses(transactionId: String) async throws(AppStoreClientError) -> [SignedSubscriptionState] {
        calls.withLock { $0.append("statuses \(transactionId)") }
        try await gate()
        if answers.withLock({ $0.unknown.contains(transactionId) }) {
            throw AppStoreClientError(.apiError, "not found", httpStatus: 404)
        }
        return answers.withLock { $0.statuses[transactionId] ?? [] }
    }

    /// The history in pages of `historyPageSize` (the revision is the next page's index); one
    /// call recorded per page.
    func transactionHistoryPage(transactionId: String, revision: String?) async throws(AppStoreClientError)
        -> HistoryResponse
    {
        calls.withLock { $0.append("history \(transactionId)") }
        try await gate()
        let (all, size) = answers.withLock { ($0.history[transactionId] ?? [], $0.historyPageSize) }
        let start = min(revision.flatMap { Int($0) } ?? 0, all.count)
        let end = min(start + size, all.count)
        return HistoryResponse(
            revision: String(end), hasMore: end < all.count, signedTransactions: Array(all[start..<end]))
    }

    func transactionInfo(transactionId: String) async throws(AppStoreClientError) -> String {
        calls.withLock { $0.append("info \(transactionId)") }
        try await gate()
        guard let signed = answers.withLock({ $0.info[transactionId] }) else {
            throw AppStoreClientError(.apiError, "not found", httpStatus: 404)
        }
        return signed
    }

    func sendConsumptionInformation(transactionId: String, request: ConsumptionRequest)
        async throws(AppStoreClientError)
    {
        calls.withLock { $0.append("consumption \(transactionId)") }
        try await gate()
        answers.withLock { $0.consumption[transactionId] = request }
    }

    func notificationHistory(_ request: NotificationHistoryRequest, paginationToken: String?)
        async throws(AppStoreClientError) -> NotificationHistoryResponse
    {
        let index = paginationToken.flatMap { Int($0) } ?? 0
        calls.withLock { $0.append("notificationHistory \(index)") }
        historyRequests.withLock { $0.append(request) }
        try await gate()
        let (pages, failing) = answers.withLock { ($0.notificationPages, $0.failingPage) }
        if failing == index {
            throw AppStoreClientError(.apiError, "unavailable", httpStatus: 503)
        }
        let page = index < pages.count ? pages[index] : []
        let more = index + 1 < pages.count
        return NotificationHistoryResponse(
            paginationToken: more ? String(index + 1) : nil, hasMore: more,
            notificationHistory: page.map { NotificationHistoryResponseItem(signedPayload: $0, sendAttempts: nil) })
    }

    func verifyReceipt(_ receiptData: String) async throws(AppStoreClientError) -> (
        environment: AppStoreEnvironment, response: VerifyReceiptResponseBody
    ) {
        throw AppStoreClientError(.invalidConfiguration, "no verifyReceipt in this fake")
    }
}

/// Posting transactions: completion from the App Store Server API, transfer policies, aliases,
/// app account tokens.
@Suite(.serialized) struct PurchaseTests {
    @Test func transactionIdIsCompletedFromTheAppStore() async throws {
        let fake = FakeAppStore()
        let harness = try await ServerHarness(connections: { _, _, _ in fake })
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let original = uniqueDigits()
        let renewal = uniqueDigits()
        let first = try signer.transaction(
            id: original, originalId: original, purchase: t0, expires: t0.plus(days: 30), signed: t0)
        let latest = try signer.transaction(
            id: renewal, originalId: original, purchase: t0.plus(days: 30), expires: t0.plus(days: 60),
            signed: t0.plus(days: 30), reason: .renewal)
        fake.answers.withLock {
            $0.info[original] = first
            $0.history[original] = [first, latest]
            $0.statuses[original] = [
                SignedSubscriptionState(
                    signedTransactionInfo: latest,
                    signedRenewalInfo: try? signer.renewal(originalId: original, signed: t0.plus(days: 30)))
            ]
        }
        harness.clock.set(t0.plus(days: 31))
        let response = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/carol/transactions", key: app.publicKey,
            json: ["transactionId": original])
        #expect(response.status == 200, "\(response.text)")
        let pro = (response.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any]
        #expect(pro?["isActive"] as? Bool == true)
        #expect(pro?["expiresDate"] as? Int64 == t0.plus(days: 60).millisecondsSince1970)
        #expect(fake.calls.withLock { $0 } == ["info \(original)", "statuses \(original)", "history \(original)"])

        let facts = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/customers/carol/transactions?limit=1", key: app.secretKey)
        #expect(facts.status == 200)
        let items = facts.json["items"] as? [[String: Any]] ?? []
        #expect(items.count == 1)
        let cursor = try #require(facts.json["nextCursor"] as? String)
        let next = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/customers/carol/transactions?limit=10&cursor=\(cursor)", key: app.secretKey)
        #expect((next.json["items"] as? [[String: Any]])?.isEmpty == false)
        #expect((items.first?["raw"] as? String)?.split(separator: ".").count == 3)
        // The decoded fact itself, not the engine's enum wrapping.
        let fact = items.first?["fact"] as? [String: Any]
        #expect(fact?["originalTransactionId"] as? String == original)
        #expect(fact?["transaction"] == nil)

        // Restore asks Apple again for every original transaction the customer owns.
        let restored = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/carol/restore", key: app.publicKey, json: [String: String]())
        #expect(restored.status == 200)
        // Unknown transaction ids are Apple's 404.
        let unknown = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/carol/transactions", key: app.publicKey,
            json: ["transactionId": "999"])
        #expect(unknown.status == 404)
    }

    @Test func appReceiptIsVerifiedThenCompletedFromTheAppStore() async throws {
        let fake = FakeAppStore()
        let harness = try await ServerHarness(connections: { _, _, _ in fake })
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let original = uniqueDigits()
        let signed = try signer.transaction(
            id: original, originalId: original, purchase: t0, expires: t0.plus(days: 30), signed: t0)
        fake.answers.withLock {
            $0.info[original] = signed
            $0.history[original] = [signed]
        }
        func receipt(bundleId: String, ca: TestCertificateAuthority) throws -> String {
            var builder = AppReceiptBuilder()
            builder.set(0, .string("ProductionSandbox"))
            builder.set(2, .string(bundleId))
            builder.set(12, AppReceiptBuilder.date(t0))
            builder.inAppPurchases = [
                [(1701, .integer(1)), (1702, .string("monthly")), (1703, .string(original)), (1705, .string(original))]
            ]
            let der = try builder.signed(certificate: ca.leaf, key: ca.leafKey, chain: [ca.intermediate])
            return Data(der).base64EncodedString()
        }
        harness.clock.set(t0.plus(days: 1))
        let path = "/v1/apps/\(app.appId)/customers/olga/receipts"
        let accepted = try await harness.request(
            "POST", path, key: app.publicKey, json: ["receipt": try receipt(bundleId: app.bundleId, ca: harness.ca)])
        #expect(accepted.status == 200, "\(accepted.text)")
        let pro = (accepted.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any]
        #expect(pro?["isActive"] as? Bool == true)
        // The receipt only names the purchase; its facts come from Apple's signed answers.
        #expect(fake.calls.withLock { $0 } == ["statuses \(original)", "history \(original)"])

        // Checked at the receipt's creation date: still valid after the signing certificate expired.
        harness.clock.set(TestSigning.validUntil.plus(days: 1))
        let late = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/olga/receipts", key: app.publicKey,
            json: ["receipt": try receipt(bundleId: app.bundleId, ca: harness.ca)])
        #expect(late.status == 200, "\(late.text)")

        // A receipt signed by another CA, or for another app, is refused before Apple is asked.
        let callsBefore = fake.calls.withLock { $0.count }
        let foreign = try await harness.request(
            "POST", path, key: app.publicKey,
            json: ["receipt": try receipt(bundleId: app.bundleId, ca: try TestSigning.authority(name: "Other"))])
        #expect(foreign.status == 400)
        let otherApp = try await harness.request(
            "POST", path, key: app.publicKey, json: ["receipt": try receipt(bundleId: "com.other", ca: harness.ca)])
        #expect(otherApp.status == 400)
        let garbage = try await harness.request(
            "POST", path, key: app.publicKey, json: ["receipt": "bm90IGEgcmVjZWlwdA=="])
        #expect(garbage.status == 400)
        #expect(fake.calls.withLock { $0.count } == callsBefore)
    }

    @Test func transferPolicies() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let newest = try await harness.createApp()
        let first = try await harness.createApp(settings: ["transferPolicy": "keep_with_first"])
        let shared = try await harness.createApp(settings: ["transferPolicy": "share"])
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        harness.clock.set(t0.plus(days: 1))
        func active(_ response: TestResponse) -> Bool {
            ((response.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any])?["isActive"] as? Bool ?? false
        }
        for (app, expectTransfer) in [(newest, true), (first, false)] {
            let id = uniqueDigits()
            let jws = try signer.transaction(
                id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0)
            let path = { (user: String) in "/v1/apps/\(app.appId)/customers/\(user)/transactions" }
            #expect(
                active(
                    try await harness.request(
                        "POST", path("dave"), key: app.publicKey, json: ["signedTransaction": jws])))
            let erin = try await harness.request(
                "POST", path("erin"), key: app.publicKey, json: ["signedTransaction": jws])
            #expect(active(erin) == expectTransfer)
            let dave = try await harness.request("GET", "/v1/apps/\(app.appId)/customers/dave", key: app.publicKey)
            #expect(active(dave) == !expectTransfer)
            // The receiving customer gets a TRANSFER event (and its webhook); a replay adds none.
            _ = try await harness.request("POST", path("erin"), key: app.publicKey, json: ["signedTransaction": jws])
            let events = try await harness.request(
                "GET", "/v1/apps/\(app.appId)/customers/erin/events", key: app.secretKey)
            let transfers = (events.json["events"] as? [[String: Any]] ?? []).compactMap {
                $0["event"] as? [String: Any]
            }.filter { $0["type"] as? String == "TRANSFER" }
            #expect(transfers.count == (expectTransfer ? 1 : 0))
            if expectTransfer {
                #expect(
                    transfers.first?["id"] as? String
                        == "TRANSFER/\(id)/dave->erin/\(t0.plus(days: 1).millisecondsSince1970)")
                #expect(transfers.first?["originalTransactionId"] as? String == id)
                #expect(transfers.first?["entitlementIds"] as? [String] == ["pro"])
            }
        }
        let audit = try await harness.store.read { try $0.auditEntries(after: nil, limit: 500) }
        #expect(audit.contains { $0.action == "customer.transfer" && $0.appId == newest.appId })
        #expect(!audit.contains { $0.action == "customer.transfer" && $0.appId == first.appId })

        // Share: both app user ids keep access; a later refund notification reaches both.
        let id = uniqueDigits()
        let jws = try signer.transaction(id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0)
        let path = { (user: String) in "/v1/apps/\(shared.appId)/customers/\(user)/transactions" }
        #expect(
            active(
                try await harness.request("POST", path("fay"), key: shared.publicKey, json: ["signedTransaction": jws]))
        )
        #expect(
            active(
                try await harness.request("POST", path("gus"), key: shared.publicKey, json: ["signedTransaction": jws]))
        )
        #expect(
            active(try await harness.request("GET", "/v1/apps/\(shared.appId)/customers/fay", key: shared.publicKey)))
        let refunded = try signer.transaction(
            id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0.plus(days: 0.5),
            revocation: t0.plus(days: 0.5))
        let refund = try signer.notification(.refund, transaction: refunded, signed: t0.plus(days: 0.5))
        let delivered = try await harness.request(
            "POST", "/v1/apps/\(shared.appId)/notifications/appstore", json: ["signedPayload": refund])
        #expect(delivered.status == 200, "\(delivered.text)")
        for user in ["fay", "gus"] {
            #expect(
                !active(
                    try await harness.request(
                        "GET", "/v1/apps/\(shared.appId)/customers/\(user)", key: shared.publicKey)))
        }
        let shares = try await harness.store.read { try $0.auditEntries(after: nil, limit: 500) }
        #expect(shares.filter { $0.action == "customer.share" && $0.appId == shared.appId }.count == 1)
    }

    @Test func appAccountTokenClaimsLaterNotificationsAndAliasesMerge() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let token = UUID()
        harness.clock.set(t0.plus(days: 1))
        // A first purchase carries the token: frank is linked to it.
        let a = uniqueDigits()
        let jws = try signer.transaction(
            id: a, originalId: a, purchase: t0, expires: t0.plus(days: 30), signed: t0, appAccountToken: token)
        #expect(
            try await harness.request(
                "POST", "/v1/apps/\(app.appId)/customers/frank/transactions", key: app.publicKey,
                json: ["signedTransaction": jws]
            ).status == 200)
        // A notification for a new purchase with the same token goes straight to frank.
        let b = uniqueDigits()
        let other = try signer.transaction(
            id: b, originalId: b, purchase: t0, expires: t0.plus(days: 30), signed: t0, appAccountToken: token)
        let notified = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/notifications/appstore",
            json: ["signedPayload": try signer.notification(.subscribed, transaction: other, signed: t0)])
        #expect(notified.json["outcome"] as? String == "applied")
        let customer = try await harness.store.read { try $0.customer(appId: app.appId, .appUserId("frank")) }
        #expect(customer?.originalTransactionIds.sorted() == [a, b].sorted())

        // Alias: grace's purchases merge into frank; grace then reads as frank.
        let c = uniqueDigits()
        let graceJWS = try signer.transaction(
            id: c, originalId: c, purchase: t0, expires: t0.plus(days: 30), signed: t0)
        _ = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/grace/transactions", key: app.publicKey,
            json: ["signedTransaction": graceJWS])
        let merged = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/frank/aliases", key: app.secretKey, json: ["alias": "grace"])
        #expect(merged.status == 200, "\(merged.text)")
        let after = try await harness.store.read { try $0.customer(appId: app.appId, .appUserId("frank")) }
        #expect(after?.originalTransactionIds.contains(c) == true)
        #expect(after?.aliases == ["grace"])
    }
}
