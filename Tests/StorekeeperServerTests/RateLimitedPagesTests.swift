import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Apple counts every page of a paginated endpoint as a call: a history read page by page takes
/// one slot of the app's rate limiter per page, never one per run and never none.
@Suite(.serialized) struct RateLimitedPagesTests {
    @Test func aMultiPageHistoryReplayTakesOneSlotPerPage() async throws {
        let fake = FakeAppStore()
        let (harness, app) = try await RecoveryWorkerTests.setUp(fake)
        defer { Task { await harness.stop() } }
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        var pages: [[String]] = []
        for page in 0..<3 {
            pages.append([
                try RecoveryWorkerTests.subscribed(signer, original: uniqueDigits(), at: t0.plus(days: Double(page)))
            ])
        }
        fake.answers.withLock { $0.notificationPages = pages }
        harness.clock.set(t0.plus(days: 3))
        let limiter = harness.application.ingestion.rateLimiters.limiter(appId: app.appId, environment: .sandbox)
        let run = try #require(await harness.application.historyReplayWorker.runOnce().runs["\(app.appId)/Sandbox"])
        #expect(run.completed && run.pages == 3)
        #expect(limiter.slotsTaken(.getNotificationHistory) == 3)
        #expect(
            fake.calls.withLock { $0 } == ["notificationHistory 0", "notificationHistory 1", "notificationHistory 2"])
        // A second run: three more pages, three more slots.
        harness.clock.set(t0.plus(days: 4))
        #expect(await harness.application.historyReplayWorker.runOnce().runs["\(app.appId)/Sandbox"]?.pages == 3)
        #expect(limiter.slotsTaken(.getNotificationHistory) == 6)
    }

    @Test func aMultiPageTransactionHistoryTakesOneSlotPerPage() async throws {
        let fake = FakeAppStore()
        let harness = try await ServerHarness(connections: { _, _, _ in fake })
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let original = uniqueDigits()
        var history: [String] = []
        for month in 0..<3 {
            history.append(
                try signer.transaction(
                    id: month == 0 ? original : uniqueDigits(), originalId: original,
                    purchase: t0.plus(days: Double(30 * month)), expires: t0.plus(days: Double(30 * month + 30)),
                    signed: t0.plus(days: Double(30 * month)), reason: month == 0 ? .purchase : .renewal))
        }
        fake.answers.withLock {
            $0.info[original] = history[0]
            $0.history[original] = history
            $0.historyPageSize = 1
        }
        harness.clock.set(t0.plus(days: 61))
        let response = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/paula/transactions", key: app.publicKey,
            json: ["transactionId": original])
        #expect(response.status == 200, "\(response.text)")
        let pro = (response.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any]
        #expect(pro?["expiresDate"] as? Int64 == t0.plus(days: 90).millisecondsSince1970)
        #expect(
            fake.calls.withLock { $0 } == [
                "info \(original)", "statuses \(original)", "history \(original)", "history \(original)",
                "history \(original)",
            ])
        let limiter = harness.application.ingestion.rateLimiters.limiter(appId: app.appId, environment: .sandbox)
        #expect(limiter.slotsTaken(.getTransactionHistoryV2) == 3)
        #expect(limiter.slotsTaken(.getAllSubscriptionStatuses) == 1)
        #expect(limiter.slotsTaken(.getTransactionInfo) == 1)
    }
}
