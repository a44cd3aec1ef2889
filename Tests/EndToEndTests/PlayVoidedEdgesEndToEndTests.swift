import AppStoreModels
import Foundation
import GooglePlaySimulator
import Storage
import StorekeeperIngestion
import Testing

/// Issue 15, voided-purchases edge cases against the Play simulator through a running server:
/// a voided purchase of a token Storekeeper never read is kept (counted, listed for the
/// operator) and refunds the purchase when its token arrives; a window holding more than one
/// run's pages resumes at its page token and completes.
@Suite(.serialized) struct PlayVoidedEdgesEndToEndTests {
    static let day = PlayEndToEndTests.day
    static let package = PlayEndToEndTests.package

    static func unmatched(_ harness: EndToEndHarness) async throws -> [String: Any] {
        try harness.expect(
            200,
            await harness.request(
                "GET", "/v1/admin/apps/\(harness.appId)/googleplay/unmatched-voided", key: EndToEndHarness.adminKey)
        ).json
    }

    static func metrics(_ harness: EndToEndHarness) async throws -> String {
        try await HTTPAnswer.send("GET", harness.server.baseURL.absoluteString + "/metrics").text
    }

    /// It was skipped ("nobody owns it"): the token posted later showed Google's state alone,
    /// without the refund.
    @Test func aVoidedPurchaseOfATokenNeverReadIsKeptAndAppliesWhenTheTokenArrives() async throws {
        try await PlayEndToEndTests.run { harness in
            // Storekeeper hears nothing of the purchase nor of its refund.
            await harness.play.setPushURL(nil)
            let token = try await harness.play.purchaseSubscription(packageName: Self.package, productId: "monthly")
            let order = try #require(await harness.play.subscription(token)?.orderId)
            harness.clock.advance(milliseconds: Self.day)
            try await harness.play.voidSubscription(token, reason: .remorse)
            let voidedAt = harness.clock.now.millisecondsSince1970

            let worker = harness.application.playVoidedPollingWorker
            let run = try #require(await worker.runOnce()[harness.appId])
            #expect(run.completed && run.failure == nil)
            #expect((run.listed, run.newVoided, run.unknownTokens, run.skipped) == (1, 1, 1, 0))
            #expect(
                try await Self.metrics(harness).contains(
                    #"storekeeper_play_voided_unmatched{app="\#(harness.appId)"} 1"# + "\n"))
            var shown = try await Self.unmatched(harness)
            #expect(shown["count"] as? Int == 1)
            let entries = try #require(shown["voided"] as? [[String: Any]])
            #expect(entries.count == 1)
            #expect(
                (entries.first ?? [:]).keys.sorted() == [
                    "orderId", "purchaseToken", "receivedAt", "refundType", "source", "voidedAt", "voidedReason",
                ])
            #expect(entries.first?["purchaseToken"] as? String == token)
            #expect(entries.first?["orderId"] as? String == order)
            #expect(entries.first?["voidedAt"] as? Int64 == voidedAt)
            #expect(entries.first?["refundType"] as? String == "full")
            #expect(entries.first?["voidedReason"] as? Int == 1)
            #expect(entries.first?["source"] as? String == "voided_poll")

            // The app posts the token: the kept refund applies at once.
            harness.clock.advance(milliseconds: Self.day)
            try harness.expect(200, await PlayEndToEndTests.post(harness, "ivy", token: token, productId: "monthly"))
            let subscription = try #require(try await PlayRecoveryEndToEndTests.subscription(harness, "ivy"))
            #expect(subscription["status"] as? String == "REFUNDED")
            #expect(subscription["isActive"] as? Bool == false)
            #expect(
                (subscription["revocation"] as? NSDictionary)
                    == ["kind": "REFUND", "refundReason": "OTHER", "revokedAt": voidedAt] as NSDictionary)
            #expect(try await PlayEndToEndTests.events(harness, "ivy") == ["INITIAL_PURCHASE", "REFUND"])
            shown = try await Self.unmatched(harness)
            #expect(shown["count"] as? Int == 0)
            #expect((shown["voided"] as? [Any])?.isEmpty == true)
            _ = await worker.runOnce()
            #expect(
                try await Self.metrics(harness).contains(
                    #"storekeeper_play_voided_unmatched{app="\#(harness.appId)"} 0"# + "\n"))
        }
    }

    /// A window of more than `maximumPages` pages was listed from its first page at every run
    /// and never completed (more than 100,000 voided purchases with the defaults).
    @Test func aWindowLongerThanOneRunResumesAtItsPageToken() async throws {
        try await PlayEndToEndTests.run { harness in
            await harness.play.setPushURL(nil)
            for _ in 0..<5 {
                let token = try await harness.play.purchaseProduct(packageName: Self.package, productId: "lifetime")
                harness.clock.advance(milliseconds: 60_000)
                try await harness.play.voidProduct(token)
            }
            let ingestion = harness.application.ingestion.googlePlay
            let runtime = try await ingestion.runtimes.runtime(appId: harness.appId)
            let settings = PlayVoidedPurchasesPolling.Settings(maximumPages: 1, pageSize: 2)
            func poll() async -> PlayVoidedPurchasesPolling.Run {
                await ingestion.voidedPolling.poll(runtime: runtime, owner: "e2e", settings: settings)
            }
            func cursor() async throws -> PlayVoidedCursor? {
                try await harness.store.read { try $0.playVoidedCursor(appId: harness.appId) }
            }
            let first = await poll()
            let windowStart = try #require(first.windowStart)
            let windowEnd = try #require(first.windowEnd)
            #expect(
                (first.completed, first.resumed, first.pages, first.listed, first.newVoided) == (false, false, 1, 2, 2))
            #expect(
                try await cursor()?.openWindow
                    == PlayVoidedWindow(start: windowStart, end: windowEnd, pageToken: "sim-page-2"))
            #expect(try await cursor()?.cursorAt == nil)

            // Later runs go on with the same window, from the page where the last one stopped.
            harness.clock.advance(milliseconds: 3_600_000)
            let second = await poll()
            #expect((second.completed, second.resumed, second.listed, second.newVoided) == (false, true, 2, 2))
            #expect((second.windowStart, second.windowEnd) == (windowStart, windowEnd))
            #expect(try await cursor()?.openWindow?.pageToken == "sim-page-4")
            let third = await poll()
            #expect((third.completed, third.resumed, third.listed, third.newVoided) == (true, true, 1, 1))
            #expect(try await cursor()?.openWindow == nil)
            #expect(try await cursor()?.cursorAt == windowEnd)
            #expect(try await harness.store.read { try $0.playUnmatchedVoidedCount(appId: harness.appId) } == 5)

            // A page token Google refuses closes the window: the run after lists it from its start.
            let refusedAt = harness.clock.now
            let stale = PlayVoidedWindow(start: windowStart, end: windowEnd, pageToken: "sim-page-expired")
            try await harness.store.write { tx in
                _ = try tx.leasePlayVoidedCursor(
                    appId: harness.appId, owner: "e2e", now: refusedAt, leaseMilliseconds: 60_000)
                _ = try tx.holdPlayVoidedWindow(
                    appId: harness.appId, owner: "e2e", window: stale, now: refusedAt, leaseMilliseconds: 60_000)
                _ = try tx.releasePlayVoidedCursor(appId: harness.appId, owner: "e2e", error: nil, now: refusedAt)
            }
            let refused = await poll()
            #expect(refused.resumed && refused.failure != nil && refused.pages == 0)
            #expect(try await cursor()?.openWindow == nil)
            let restarted = await poll()
            #expect((restarted.resumed, restarted.listed, restarted.failure == nil) == (false, 2, true))
            #expect(restarted.windowEnd == harness.clock.now)
        }
    }
}
