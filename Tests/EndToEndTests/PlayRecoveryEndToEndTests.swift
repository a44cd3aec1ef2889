import AppStoreModels
import Foundation
import GooglePlayModels
import GooglePlaySimulator
import Storage
import StorekeeperIngestion
import Testing

/// Issue 15, the Play recovery workers against the Play simulator through a running server:
/// pushes are lost (the simulator's push URL taken away) and the workers find what they would
/// have told: a refund by voided-purchases polling, a renewal, a grace period, an account hold
/// and an expiry by re-reading the subscription. Exact CustomerInfo after each.
@Suite(.serialized) struct PlayRecoveryEndToEndTests {
    static let day = PlayEndToEndTests.day
    static let hour: Int64 = 3_600_000
    static let package = PlayEndToEndTests.package

    static func subscription(_ harness: EndToEndHarness, _ customer: String) async throws -> NSDictionary? {
        let info = try await PlayEndToEndTests.customer(harness, customer)
        return (info["subscriptions"] as? [String: Any])?["monthly"] as? NSDictionary
    }

    /// The customer's `monthly` subscription as sorted `key=value` lines (a failure shows them).
    static func shown(_ harness: EndToEndHarness, _ customer: String) async throws -> [String] {
        func text(_ value: Any) -> String {
            guard let object = value as? [String: Any] else { return "\(value)" }
            return "{" + object.keys.sorted().map { "\($0)=\(text(object[$0]!))" }.joined(separator: ", ") + "}"
        }
        let subscription = try await subscription(harness, customer) as? [String: Any] ?? [:]
        return subscription.keys.sorted().map { "\($0)=\(text(subscription[$0]!))" }
    }

    static func until(_ millis: Int64) -> String {
        Timestamp(millisecondsSince1970: millis).description.replacingOccurrences(of: ".000Z", with: "Z")
    }

    @Test func aLostVoidedPushIsFoundByVoidedPolling() async throws {
        try await PlayEndToEndTests.run { harness in
            let token = try await harness.play.purchaseSubscription(packageName: Self.package, productId: "monthly")
            try harness.expect(200, await PlayEndToEndTests.post(harness, "erin", token: token, productId: "monthly"))
            harness.clock.advance(milliseconds: 2 * Self.day)
            await harness.play.setPushURL(nil)
            try await harness.play.voidSubscription(token, reason: .remorse)
            let voidedAt = harness.clock.now.millisecondsSince1970
            // The push was lost: Storekeeper still grants.
            #expect(try await Self.subscription(harness, "erin")?["isActive"] as? Bool == true)

            let worker = harness.application.playVoidedPollingWorker
            let run = try #require(await worker.runOnce()[harness.appId])
            #expect(run.leased && run.completed && run.failure == nil)
            #expect((run.pages, run.listed, run.newVoided, run.skipped) == (1, 1, 1, 0))
            #expect(run.windowEnd == harness.clock.now)
            #expect(run.windowStart == harness.clock.now.adding(milliseconds: -30 * Self.day + Self.hour))
            let order = try #require(await harness.play.subscription(token)?.orderId)
            let start = voidedAt - 2 * Self.day
            let erin = try await Self.shown(harness, "erin")
            #expect(
                erin == [
                    "environment=Sandbox", "expiresDate=\(start + 30 * Self.day)", "isActive=false",
                    "originalPurchaseDate=\(start)", "originalTransactionId=\(token)", "ownership=PURCHASED",
                    "periodType=NORMAL", "productId=monthly", "purchaseDate=\(start)",
                    "reason=refunded \(Self.until(voidedAt)): other reason",
                    "revocation={kind=REFUND, refundReason=OTHER, revokedAt=\(voidedAt)}",
                    "status=REFUNDED",
                    "store=play_store", "subscriptionGroup=G1", "transactionId=\(order)", "willRenew=false",
                ])
            #expect(try await PlayEndToEndTests.events(harness, "erin") == ["INITIAL_PURCHASE", "REFUND"])
            #expect(
                try await harness.store.read { try $0.playVoidedCursor(appId: harness.appId) }?.cursorAt
                    == harness.clock.now)

            // The next run lists it again (the overlap) and changes nothing.
            harness.clock.advance(milliseconds: Self.hour)
            let again = try #require(await worker.runOnce()[harness.appId])
            #expect((again.completed, again.listed, again.newVoided) == (true, 1, 0))
            #expect(try await PlayEndToEndTests.events(harness, "erin") == ["INITIAL_PURCHASE", "REFUND"])
            let metrics = try await HTTPAnswer.send("GET", harness.server.baseURL.absoluteString + "/metrics").text
            for line in [
                #"storekeeper_play_voided_listed_total{app="\#(harness.appId)"} 2"#,
                #"storekeeper_play_voided_new_total{app="\#(harness.appId)"} 1"#,
                #"storekeeper_play_voided_runs_total{outcome="completed"} 2"#,
                #"storekeeper_play_voided_cursor_age_seconds{app="\#(harness.appId)"} 0"#,
            ] {
                #expect(metrics.contains(line + "\n"), "\(line)")
            }
        }
    }

    @Test func aLostRenewalPushIsFoundByTheReread() async throws {
        try await PlayEndToEndTests.run { harness in
            let start = harness.clock.now.millisecondsSince1970
            let token = try await harness.play.purchaseSubscription(packageName: Self.package, productId: "monthly")
            try harness.expect(200, await PlayEndToEndTests.post(harness, "frank", token: token, productId: "monthly"))
            await harness.play.setPushURL(nil)
            harness.clock.advance(milliseconds: 30 * Self.day)
            try await harness.play.renew(token)
            let worker = harness.application.playRereadWorker
            // Within the delay after the expiry nothing is due; Storekeeper shows it expired.
            harness.clock.advance(milliseconds: Self.hour - 60_000)
            #expect(await worker.runOnce() == 0)
            #expect(try await Self.subscription(harness, "frank")?["status"] as? String == "EXPIRED")
            harness.clock.advance(milliseconds: 60_000)
            #expect(await worker.runOnce() == 1)
            let renewal = try #require(await harness.play.subscription(token)?.latestOrderId)
            let end = start + 60 * Self.day
            let frank = try await Self.shown(harness, "frank")
            #expect(
                frank == [
                    "autoRenewProductId=monthly", "environment=Sandbox", "expiresDate=\(end)", "isActive=true",
                    "originalPurchaseDate=\(start)", "originalTransactionId=\(token)", "ownership=PURCHASED",
                    "periodType=NORMAL", "productId=monthly", "purchaseDate=\(start + 30 * Self.day)",
                    "reason=active until \(Self.until(end)); renews", "status=ACTIVE", "store=play_store",
                    "subscriptionGroup=G1", "transactionId=\(renewal)", "willRenew=true",
                ])
            #expect(try await PlayEndToEndTests.events(harness, "frank") == ["INITIAL_PURCHASE", "RENEWAL"])
            // Read after its expiry: not due again.
            #expect(await worker.runOnce() == 0)
        }
    }

    @Test func lostGraceHoldAndExpiryPushesAreFoundByTheReread() async throws {
        try await PlayEndToEndTests.run { harness in
            let start = harness.clock.now.millisecondsSince1970
            let token = try await harness.play.purchaseSubscription(packageName: Self.package, productId: "monthly")
            try harness.expect(200, await PlayEndToEndTests.post(harness, "gina", token: token, productId: "monthly"))
            _ = await harness.application.jobWorker.runDue()
            await harness.play.setPushURL(nil)
            let worker = harness.application.playRereadWorker

            // The renewal fails: three days of grace Storekeeper did not hear of.
            harness.clock.advance(milliseconds: 30 * Self.day)
            try await harness.play.enterGracePeriod(token)
            let graceEnd = harness.clock.now.millisecondsSince1970 + 3 * Self.day
            harness.clock.advance(milliseconds: Self.hour)
            #expect(try await Self.subscription(harness, "gina")?["isActive"] as? Bool == false)
            #expect(await worker.runOnce() == 1)
            var shown = try #require(try await Self.subscription(harness, "gina"))
            #expect(shown["status"] as? String == "IN_GRACE_PERIOD")
            #expect(shown["isActive"] as? Bool == true)
            #expect(shown["expiresDate"] as? Int64 == graceEnd)

            // Grace ends in account hold: found an hour after the grace period's end.
            harness.clock.advance(milliseconds: 3 * Self.day - Self.hour)
            try await harness.play.hold(token)
            // Google ends the line item at the hold: its expiry stays there when the hold expires.
            let heldAt = harness.clock.now.millisecondsSince1970
            harness.clock.advance(milliseconds: Self.hour)
            #expect(await worker.runOnce() == 1)
            shown = try #require(try await Self.subscription(harness, "gina"))
            #expect(shown["status"] as? String == "IN_BILLING_RETRY")
            #expect(shown["isActive"] as? Bool == false)

            // On hold, the token is re-read daily: nothing new a day later.
            #expect(await worker.runOnce() == 0)
            harness.clock.advance(milliseconds: Self.day)
            #expect(await worker.runOnce() == 1)
            #expect(try await Self.subscription(harness, "gina")?["status"] as? String == "IN_BILLING_RETRY")
            // The hold ends in expiry: found by the next daily re-read.
            try await harness.play.expire(token)
            #expect(await worker.runOnce() == 0)
            harness.clock.advance(milliseconds: Self.day)
            #expect(await worker.runOnce() == 1)
            let order = try #require(await harness.play.subscription(token)?.orderId)
            let gina = try await Self.shown(harness, "gina")
            #expect(
                gina == [
                    "environment=Sandbox", "expirationReason=BILLING_ERROR", "expiresDate=\(heldAt)",
                    "isActive=false", "originalPurchaseDate=\(start)", "originalTransactionId=\(token)",
                    "ownership=PURCHASED", "periodType=NORMAL", "productId=monthly", "purchaseDate=\(start)",
                    "reason=expired \(Self.until(heldAt)), billing error, payment never recovered",
                    "status=EXPIRED", "store=play_store",
                    "subscriptionGroup=G1", "transactionId=\(order)", "willRenew=false",
                ])
            #expect(
                try await harness.store.read {
                    try $0.playSubscriptionWatch(appId: harness.appId, purchaseToken: token)
                }?
                .state == "SUBSCRIPTION_STATE_EXPIRED")
            // Expired: never due again.
            harness.clock.advance(milliseconds: 2 * Self.day)
            #expect(await worker.runOnce() == 0)
            let metrics = try await HTTPAnswer.send("GET", harness.server.baseURL.absoluteString + "/metrics").text
            #expect(metrics.contains(#"storekeeper_play_rereads_total{outcome="applied"} 4"# + "\n"))
        }
    }

    @Test func anAppThatTurnedThePlayWorkersOffIsLeftAlone() async throws {
        try await PlayEndToEndTests.run { harness in
            try harness.expect(
                200,
                await harness.request(
                    "PUT", "/v1/admin/apps/\(harness.appId)", key: EndToEndHarness.adminKey,
                    json: ["recovery": ["playVoidedPolling": false, "playReread": false]]))
            let shown = try await harness.request(
                "GET", "/v1/admin/apps/\(harness.appId)", key: EndToEndHarness.adminKey)
            #expect((shown.json["recovery"] as? [String: Bool])?["playReread"] == false)
            let token = try await harness.play.purchaseSubscription(packageName: Self.package, productId: "monthly")
            try harness.expect(200, await PlayEndToEndTests.post(harness, "hal", token: token, productId: "monthly"))
            await harness.play.setPushURL(nil)
            try await harness.play.voidSubscription(token)
            harness.clock.advance(milliseconds: 31 * Self.day)
            #expect(await harness.application.playVoidedPollingWorker.runOnce().isEmpty)
            #expect(await harness.application.playRereadWorker.runOnce() == 0)
            let events = try await PlayEndToEndTests.events(harness, "hal")
            #expect(events == ["INITIAL_PURCHASE"])
        }
    }
}
