import AppStoreModels
import Foundation
import GooglePlayModels
import GooglePlaySimulator
import Storage
import StorekeeperTesting
import Testing

/// Issue 15: each Play lifecycle the purchase/renew/cancel/expire tests leave out, driven by the
/// Play simulator's operations (each pushes its RTDN to the running server) with no help from
/// the app past its first post: grace then recovery, account hold then recovery or expiry,
/// pause and resume, revocation, downgrade through `linkedPurchaseToken`, and Google's refund of
/// a purchase nobody acknowledged within three days. Each asserts the exact entitlement, the
/// status every push got and the exact events, by id, in order.
@Suite(.serialized) struct PlayLifecycleEndToEndTests {
    static let day = PlayEndToEndTests.day
    static let package = PlayEndToEndTests.package

    /// A subscription bought on Play at the harness's now, posted by the app for `customer` and
    /// acknowledged by Storekeeper's job: its token, first order id and start.
    static func subscribe(
        _ harness: EndToEndHarness, _ customer: String, productId: String = "monthly"
    ) async throws -> (token: String, order: String, start: Int64) {
        let start = harness.clock.now.millisecondsSince1970
        let token = try await harness.play.purchaseSubscription(
            packageName: package, productId: productId, obfuscatedAccountId: "\(customer)-account")
        try harness.expect(200, await PlayEndToEndTests.post(harness, customer, token: token, productId: productId))
        _ = await harness.application.jobWorker.runDue()
        let order = try #require(await harness.play.subscription(token)?.orderId)
        return (token, order, start)
    }

    /// A time as the "why" texts write it.
    static func text(_ milliseconds: Int64) -> String {
        Timestamp(millisecondsSince1970: milliseconds).description.replacingOccurrences(of: ".000Z", with: "Z")
    }

    /// The customer's events, as `type/key` ids, in order.
    static func eventIds(_ harness: EndToEndHarness, _ customer: String) async throws -> [String] {
        let answer = try harness.expect(
            200,
            await harness.request(
                "GET", "/v1/apps/\(harness.appId)/customers/\(customer)/events?limit=500", key: harness.secretKey))
        return (answer.json["events"] as? [[String: Any]] ?? []).compactMap {
            ($0["event"] as? [String: Any])?["id"] as? String
        }
    }

    /// The customer's events as the API shows them, in order.
    static func events(_ harness: EndToEndHarness, _ customer: String) async throws -> [[String: Any]] {
        let answer = try harness.expect(
            200,
            await harness.request(
                "GET", "/v1/apps/\(harness.appId)/customers/\(customer)/events?limit=500", key: harness.secretKey))
        return (answer.json["events"] as? [[String: Any]] ?? []).compactMap { $0["event"] as? [String: Any] }
    }

    static func pro(_ harness: EndToEndHarness, _ customer: String) async throws -> NSDictionary {
        PlayEndToEndTests.entitlement(try await PlayEndToEndTests.customer(harness, customer), "pro") as NSDictionary
    }

    static func subscription(_ harness: EndToEndHarness, _ customer: String, _ productId: String) async throws
        -> NSDictionary
    {
        let info = try await PlayEndToEndTests.customer(harness, customer)
        return (info["subscriptions"] as? [String: Any])?[productId] as? NSDictionary ?? [:]
    }

    /// The entitlement `pro` as a monthly Play subscription bought at `start` shows it.
    static func grant(
        token: String, transactionId: String, start: Int64, purchaseDate: Int64, expires: Int64, active: Bool,
        willRenew: Bool, reason: String, productId: String = "monthly", extra: [String: Any] = [:]
    ) -> NSDictionary {
        var value: [String: Any] = [
            "entitlementId": "pro", "environment": "Sandbox", "expiresDate": expires, "isActive": active,
            "originalPurchaseDate": start, "originalTransactionId": token, "ownership": "PURCHASED",
            "periodType": "NORMAL", "productId": productId, "purchaseDate": purchaseDate, "reason": reason,
            "store": "play_store", "transactionId": transactionId, "willRenew": willRenew,
        ]
        value.merge(extra) { $1 }
        return value as NSDictionary
    }

    @Test func gracePeriodThenRecovery() async throws {
        try await PlayEndToEndTests.run { harness in
            let (token, order, start) = try await Self.subscribe(harness, "gina")
            // The renewal is declined at the period's end: three days of grace, access kept.
            harness.clock.advance(milliseconds: 30 * Self.day)
            let declined = start + 30 * Self.day
            try await harness.play.enterGracePeriod(token)
            let graceEnd = declined + 3 * Self.day
            #expect(
                try await Self.pro(harness, "gina")
                    == Self.grant(
                        token: token, transactionId: order, start: start, purchaseDate: start, expires: graceEnd,
                        active: true, willRenew: true,
                        reason:
                            "active: granted by monthly, in billing grace period until \(Self.text(graceEnd)): renewal failed, Google Play is retrying",
                        extra: ["gracePeriodExpiresDate": graceEnd, "billingIssueDetectedAt": declined]))

            // The payment goes through a day later: a new period from then.
            harness.clock.advance(milliseconds: Self.day)
            let recovered = declined + Self.day
            try await harness.play.recover(token)
            let end = recovered + 30 * Self.day
            #expect(
                try await Self.pro(harness, "gina")
                    == Self.grant(
                        token: token, transactionId: "\(order)..0", start: start, purchaseDate: recovered,
                        expires: end, active: true, willRenew: true,
                        reason: "active: granted by monthly, active until \(Self.text(end)); renews"))
            #expect(await PlayEndToEndTests.pushStatuses(harness) == [200, 200, 200])
            #expect(
                try await Self.eventIds(harness, "gina") == [
                    "INITIAL_PURCHASE/\(order)/monthly", "BILLING_ISSUE/\(order)/monthly",
                    "GRACE_PERIOD_STARTED/\(order)/monthly", "BILLING_RECOVERED/\(order)..0/monthly",
                    "RENEWAL/\(order)..0/monthly",
                ])
        }
    }

    @Test func accountHoldThenRecovery() async throws {
        try await PlayEndToEndTests.run { harness in
            let (token, order, start) = try await Self.subscribe(harness, "hank")
            harness.clock.advance(milliseconds: 30 * Self.day)
            let declined = start + 30 * Self.day
            try await harness.play.enterGracePeriod(token)
            // Grace ends without payment: account hold, no access, not churned.
            harness.clock.advance(milliseconds: 3 * Self.day)
            let held = declined + 3 * Self.day
            try await harness.play.hold(token)
            #expect(
                try await Self.pro(harness, "hank")
                    == Self.grant(
                        token: token, transactionId: order, start: start, purchaseDate: start, expires: held,
                        active: false, willRenew: true,
                        reason:
                            "inactive: monthly account hold since \(Self.text(held)): no access until the payment recovers (not churned)",
                        extra: ["billingIssueDetectedAt": declined]))

            // Ten days into the hold the user fixes the payment: access again for a new period.
            harness.clock.advance(milliseconds: 10 * Self.day)
            let recovered = held + 10 * Self.day
            try await harness.play.recover(token)
            let end = recovered + 30 * Self.day
            #expect(
                try await Self.pro(harness, "hank")
                    == Self.grant(
                        token: token, transactionId: "\(order)..0", start: start, purchaseDate: recovered,
                        expires: end, active: true, willRenew: true,
                        reason: "active: granted by monthly, active until \(Self.text(end)); renews"))
            #expect(await PlayEndToEndTests.pushStatuses(harness) == [200, 200, 200, 200])
            #expect(
                try await Self.eventIds(harness, "hank") == [
                    "INITIAL_PURCHASE/\(order)/monthly", "BILLING_ISSUE/\(order)/monthly",
                    "GRACE_PERIOD_STARTED/\(order)/monthly", "EXPIRATION/\(order)/monthly",
                    "BILLING_RECOVERED/\(order)..0/monthly", "RENEWAL/\(order)..0/monthly",
                ])
        }
    }

    @Test func accountHoldThenExpiry() async throws {
        try await PlayEndToEndTests.run { harness in
            let (token, order, start) = try await Self.subscribe(harness, "ivan")
            // The simulator's clock does it all: grace at the period's end, hold three days later,
            // expiry when the thirty days of hold run out.
            harness.clock.advance(milliseconds: 30 * Self.day)
            try await harness.play.enterGracePeriod(token)
            let declined = start + 30 * Self.day
            harness.clock.advance(milliseconds: 3 * Self.day)
            await harness.play.tick()
            let held = declined + 3 * Self.day
            #expect(await harness.play.subscription(token)?.state == .onHold)
            #expect(try await Self.pro(harness, "ivan")["isActive"] as? Bool == false)
            harness.clock.advance(milliseconds: 30 * Self.day)
            await harness.play.tick()
            #expect(await harness.play.subscription(token)?.state == .expired)
            #expect(
                try await Self.pro(harness, "ivan")
                    == Self.grant(
                        token: token, transactionId: order, start: start, purchaseDate: start, expires: held,
                        active: false, willRenew: false,
                        reason: "inactive: monthly expired \(Self.text(held)), billing error, payment never recovered"))
            #expect(await PlayEndToEndTests.pushStatuses(harness) == [200, 200, 200, 200])
            #expect(
                try await Self.eventIds(harness, "ivan") == [
                    "INITIAL_PURCHASE/\(order)/monthly", "BILLING_ISSUE/\(order)/monthly",
                    "GRACE_PERIOD_STARTED/\(order)/monthly", "EXPIRATION/\(order)/monthly",
                ])
            #expect(try await Self.events(harness, "ivan").last?["expirationReason"] as? String == "BILLING_ERROR")
        }
    }

    @Test func pauseThenResume() async throws {
        try await PlayEndToEndTests.run { harness in
            let (token, order, start) = try await Self.subscribe(harness, "pia")
            // Paused at the period's end for thirty days: no access meanwhile.
            harness.clock.advance(milliseconds: 30 * Self.day)
            let paused = start + 30 * Self.day
            let resumes = paused + 30 * Self.day
            try await harness.play.pause(token, resumeAtMillis: resumes)
            #expect(
                try await Self.pro(harness, "pia")
                    == Self.grant(
                        token: token, transactionId: order, start: start, purchaseDate: start, expires: paused,
                        active: false, willRenew: true,
                        reason: "inactive: monthly paused since \(Self.text(paused)), resumes \(Self.text(resumes))"))
            harness.clock.advance(milliseconds: 15 * Self.day)
            #expect(try await Self.pro(harness, "pia")["isActive"] as? Bool == false)

            // It resumes by itself at its time: a new period, access again.
            harness.clock.advance(milliseconds: 15 * Self.day)
            await harness.play.tick()
            let end = resumes + 30 * Self.day
            #expect(
                try await Self.pro(harness, "pia")
                    == Self.grant(
                        token: token, transactionId: "\(order)..0", start: start, purchaseDate: resumes,
                        expires: end, active: true, willRenew: true,
                        reason: "active: granted by monthly, active until \(Self.text(end)); renews"))
            #expect(await PlayEndToEndTests.pushStatuses(harness) == [200, 200, 200])
            #expect(
                try await Self.eventIds(harness, "pia") == [
                    "INITIAL_PURCHASE/\(order)/monthly", "SUBSCRIPTION_PAUSED/\(order)/monthly",
                    "EXPIRATION/\(order)/monthly", "RENEWAL/\(order)..0/monthly",
                ])
            let expiration = try await Self.events(harness, "pia").first { $0["type"] as? String == "EXPIRATION" }
            #expect(expiration?["expirationReason"] as? String == "PAUSED")
            #expect((expiration?["occurredAt"] as? NSNumber)?.int64Value == paused)
        }
    }

    @Test func revocationIsAFullRefund() async throws {
        try await PlayEndToEndTests.run { harness in
            let (token, order, start) = try await Self.subscribe(harness, "rita")
            harness.clock.advance(milliseconds: 4 * Self.day)
            let revoked = start + 4 * Self.day
            try await harness.play.revoke(token)
            #expect(
                try await Self.pro(harness, "rita")
                    == Self.grant(
                        token: token, transactionId: order, start: start, purchaseDate: start, expires: revoked,
                        active: false, willRenew: false,
                        reason: "inactive: monthly refunded \(Self.text(revoked)): reason not given"))
            #expect(await PlayEndToEndTests.pushStatuses(harness) == [200, 200])
            let events = try await Self.events(harness, "rita")
            #expect(
                events.compactMap { $0["id"] as? String } == [
                    "INITIAL_PURCHASE/\(order)/monthly", "REFUND/\(order)/monthly",
                ])
            let refund = try #require(events.last)
            #expect(refund["store"] as? String == "play_store")
            #expect(refund["refundReason"] as? String == "UNKNOWN")
            #expect(
                refund["summary"] as? String
                    == "refunded in full on Google Play: refunded \(Self.text(revoked)): reason not given")
        }
    }

    @Test func downgradeStopsTheOldToken() async throws {
        try await PlayEndToEndTests.run { harness in
            let (yearly, order, start) = try await Self.subscribe(harness, "dora", productId: "yearly")
            harness.clock.advance(milliseconds: 5 * Self.day)
            let changed = start + 5 * Self.day
            // The new token names the old one; only its push tells the server (no post).
            let monthly = try await harness.play.changePlan(yearly, toProductId: "monthly")
            let newOrder = try #require(await harness.play.subscription(monthly)?.orderId)
            #expect(await harness.play.subscription(monthly)?.linkedPurchaseToken == yearly)
            let end = changed + 30 * Self.day
            #expect(
                try await Self.pro(harness, "dora")
                    == Self.grant(
                        token: monthly, transactionId: newOrder, start: changed, purchaseDate: changed, expires: end,
                        active: true, willRenew: true,
                        reason: "active: granted by monthly, active until \(Self.text(end)); renews"))
            let old = try await Self.subscription(harness, "dora", "yearly")
            #expect(old["isActive"] as? Bool == false)
            #expect(old["status"] as? String == "PRODUCT_CHANGED")
            #expect(old["reason"] as? String == "changed to monthly on \(Self.text(changed))")
            #expect(await PlayEndToEndTests.pushStatuses(harness) == [200, 200])
            #expect(
                try await Self.eventIds(harness, "dora") == [
                    "INITIAL_PURCHASE/\(order)/yearly", "PRODUCT_CHANGE/\(newOrder)/monthly",
                ])
            let change = try await Self.events(harness, "dora").last?["productChange"] as? NSDictionary
            #expect(
                change == [
                    "fromProductId": "yearly", "toProductId": "monthly", "kind": "DOWNGRADE", "timing": "IMMEDIATE",
                    "effectiveAt": changed,
                ])
        }
    }

    @Test func unacknowledgedPurchaseIsRefundedAfterThreeDays() async throws {
        try await PlayEndToEndTests.run(acknowledgePurchases: false) { harness in
            let (token, order, start) = try await Self.subscribe(harness, "uma")
            #expect(await harness.play.subscription(token)?.acknowledged == false)
            // One millisecond short of three days nothing happens; at three days Google refunds.
            harness.clock.advance(milliseconds: 3 * Self.day - 1)
            await harness.play.tick()
            #expect(try await Self.pro(harness, "uma")["isActive"] as? Bool == true)
            harness.clock.advance(milliseconds: 1)
            await harness.play.tick()
            let refunded = start + 3 * Self.day
            #expect(
                try await Self.pro(harness, "uma")
                    == Self.grant(
                        token: token, transactionId: order, start: start, purchaseDate: start, expires: refunded,
                        active: false, willRenew: false,
                        reason: "inactive: monthly refunded \(Self.text(refunded)): reason not given"))
            #expect(await PlayEndToEndTests.pushStatuses(harness) == [200, 200])
            #expect(
                try await Self.eventIds(harness, "uma") == [
                    "INITIAL_PURCHASE/\(order)/monthly", "REFUND/\(order)/monthly",
                ])
        }
    }
}
