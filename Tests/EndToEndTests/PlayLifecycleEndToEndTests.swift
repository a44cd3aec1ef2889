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
/// status every push got and the exact events, by id, in order (`PlayLifecycle` is the fixture).
@Suite(.serialized) struct PlayLifecycleEndToEndTests {
    static func text(_ milliseconds: Int64) -> String { PlayLifecycle.text(milliseconds) }

    @Test func gracePeriodThenRecovery() async throws {
        try await PlayLifecycle.run("gina") { gina in
            // The renewal is declined at the period's end: three days of grace, access kept.
            gina.advance(days: 30)
            let declined = gina.day(30)
            try await gina.harness.play.enterGracePeriod(gina.token)
            let graceEnd = declined + 3 * PlayLifecycle.day
            #expect(
                try await gina.pro()
                    == gina.grant(
                        expires: graceEnd, active: true, willRenew: true,
                        reason:
                            "active: granted by monthly, in billing grace period until \(Self.text(graceEnd)): renewal failed, Google Play is retrying",
                        extra: ["gracePeriodExpiresDate": graceEnd, "billingIssueDetectedAt": declined]))

            // The payment goes through a day later: a new period from then.
            gina.advance(days: 1)
            let recovered = declined + PlayLifecycle.day
            try await gina.harness.play.recover(gina.token)
            #expect(try await gina.pro() == gina.renewed(at: recovered))
            #expect(
                try await gina.outcome()
                    == PlayLifecycle.Outcome(
                        accepted: 3,
                        events: [
                            gina.event("INITIAL_PURCHASE"), gina.event("BILLING_ISSUE"),
                            gina.event("GRACE_PERIOD_STARTED"), gina.event("BILLING_RECOVERED", order: gina.renewal(0)),
                            gina.event("RENEWAL", order: gina.renewal(0)),
                        ]))
        }
    }

    @Test func accountHoldThenRecovery() async throws {
        try await PlayLifecycle.run("hank") { hank in
            hank.advance(days: 30)
            let declined = hank.day(30)
            try await hank.harness.play.enterGracePeriod(hank.token)
            // Grace ends without payment: account hold, no access, not churned.
            hank.advance(days: 3)
            let held = declined + 3 * PlayLifecycle.day
            try await hank.harness.play.hold(hank.token)
            #expect(
                try await hank.pro()
                    == hank.grant(
                        expires: held, active: false, willRenew: true,
                        reason:
                            "inactive: monthly account hold since \(Self.text(held)): no access until the payment recovers (not churned)",
                        extra: ["billingIssueDetectedAt": declined]))

            // Ten days into the hold the user fixes the payment: access again for a new period.
            hank.advance(days: 10)
            let recovered = held + 10 * PlayLifecycle.day
            try await hank.harness.play.recover(hank.token)
            #expect(try await hank.pro() == hank.renewed(at: recovered))
            #expect(
                try await hank.outcome()
                    == PlayLifecycle.Outcome(
                        accepted: 4,
                        events: [
                            hank.event("INITIAL_PURCHASE"), hank.event("BILLING_ISSUE"),
                            hank.event("GRACE_PERIOD_STARTED"), hank.event("EXPIRATION"),
                            hank.event("BILLING_RECOVERED", order: hank.renewal(0)),
                            hank.event("RENEWAL", order: hank.renewal(0)),
                        ]))
        }
    }

    @Test func accountHoldThenExpiry() async throws {
        try await PlayLifecycle.run("ivan") { ivan in
            let play = ivan.harness.play
            // The simulator's clock does it all: grace at the period's end, hold three days later,
            // expiry when the thirty days of hold run out.
            ivan.advance(days: 30)
            try await play.enterGracePeriod(ivan.token)
            ivan.advance(days: 3)
            await play.tick()
            let held = ivan.day(33)
            #expect(await play.subscription(ivan.token)?.state == .onHold)
            #expect(try await ivan.pro()["isActive"] as? Bool == false)
            ivan.advance(days: 30)
            await play.tick()
            #expect(await play.subscription(ivan.token)?.state == .expired)
            #expect(
                try await ivan.pro()
                    == ivan.grant(
                        expires: held, active: false, willRenew: false,
                        reason: "inactive: monthly expired \(Self.text(held)), billing error, payment never recovered"))
            #expect(
                try await ivan.outcome()
                    == PlayLifecycle.Outcome(
                        accepted: 4,
                        events: [
                            ivan.event("INITIAL_PURCHASE"), ivan.event("BILLING_ISSUE"),
                            ivan.event("GRACE_PERIOD_STARTED"), ivan.event("EXPIRATION"),
                        ]))
            #expect(try await ivan.events().last?["expirationReason"] as? String == "BILLING_ERROR")
        }
    }

    @Test func pauseThenResume() async throws {
        try await PlayLifecycle.run("pia") { pia in
            // Paused at the period's end for thirty days: no access meanwhile.
            pia.advance(days: 30)
            let paused = pia.day(30)
            let resumes = pia.day(60)
            try await pia.harness.play.pause(pia.token, resumeAtMillis: resumes)
            #expect(
                try await pia.pro()
                    == pia.grant(
                        expires: paused, active: false, willRenew: true,
                        reason: "inactive: monthly paused since \(Self.text(paused)), resumes \(Self.text(resumes))"))
            pia.advance(days: 15)
            #expect(try await pia.pro()["isActive"] as? Bool == false)

            // It resumes by itself at its time: a new period, access again.
            pia.advance(days: 15)
            await pia.harness.play.tick()
            #expect(try await pia.pro() == pia.renewed(at: resumes))
            #expect(
                try await pia.outcome()
                    == PlayLifecycle.Outcome(
                        accepted: 3,
                        events: [
                            pia.event("INITIAL_PURCHASE"), pia.event("SUBSCRIPTION_PAUSED"), pia.event("EXPIRATION"),
                            pia.event("RENEWAL", order: pia.renewal(0)),
                        ]))
            let expiration = try await pia.events().first { $0["type"] as? String == "EXPIRATION" }
            #expect(expiration?["expirationReason"] as? String == "PAUSED")
            #expect((expiration?["occurredAt"] as? NSNumber)?.int64Value == paused)
        }
    }

    @Test func revocationIsAFullRefund() async throws {
        try await PlayLifecycle.run("rita") { rita in
            rita.advance(days: 4)
            let revoked = rita.day(4)
            try await rita.harness.play.revoke(rita.token)
            #expect(
                try await rita.pro()
                    == rita.grant(
                        expires: revoked, active: false, willRenew: false,
                        reason: "inactive: monthly refunded \(Self.text(revoked)): reason not given"))
            #expect(
                try await rita.outcome()
                    == PlayLifecycle.Outcome(
                        accepted: 2, events: [rita.event("INITIAL_PURCHASE"), rita.event("REFUND")]))
            let refund = try #require(try await rita.events().last)
            #expect(refund["store"] as? String == "play_store")
            #expect(refund["refundReason"] as? String == "UNKNOWN")
            #expect(
                refund["summary"] as? String
                    == "refunded in full on Google Play: refunded \(Self.text(revoked)): reason not given")
        }
    }

    @Test func downgradeStopsTheOldToken() async throws {
        try await PlayLifecycle.run("dora", productId: "yearly") { dora in
            let play = dora.harness.play
            dora.advance(days: 5)
            let changed = dora.day(5)
            // The new token names the old one; only its push tells the server (no post).
            let monthly = try await play.changePlan(dora.token, toProductId: "monthly")
            let newOrder = try #require(await play.subscription(monthly)?.orderId)
            #expect(await play.subscription(monthly)?.linkedPurchaseToken == dora.token)
            let end = changed + 30 * PlayLifecycle.day
            #expect(
                try await dora.pro()
                    == dora.grant(
                        token: monthly, transactionId: newOrder, start: changed, productId: "monthly", expires: end,
                        active: true, willRenew: true,
                        reason: "active: granted by monthly, active until \(Self.text(end)); renews"))
            let old = try await dora.subscription("yearly")
            #expect(old["isActive"] as? Bool == false)
            #expect(old["status"] as? String == "PRODUCT_CHANGED")
            #expect(old["reason"] as? String == "changed to monthly on \(Self.text(changed))")
            #expect(
                try await dora.outcome()
                    == PlayLifecycle.Outcome(
                        accepted: 2,
                        events: [
                            dora.event("INITIAL_PURCHASE"),
                            dora.event("PRODUCT_CHANGE", order: newOrder, productId: "monthly"),
                        ]))
            let change = try await dora.events().last?["productChange"] as? NSDictionary
            #expect(
                change == [
                    "fromProductId": "yearly", "toProductId": "monthly", "kind": "DOWNGRADE", "timing": "IMMEDIATE",
                    "effectiveAt": changed,
                ])
        }
    }

    @Test func unacknowledgedPurchaseIsRefundedAfterThreeDays() async throws {
        // `async throws` spelled out: every `try` of this body is inside a macro, which the
        // closure's inference does not look into.
        try await PlayLifecycle.run("uma", acknowledgePurchases: false) { uma async throws in
            let play = uma.harness.play
            #expect(await play.subscription(uma.token)?.acknowledged == false)
            // One millisecond short of three days nothing happens; at three days Google refunds.
            uma.advance(days: 3, milliseconds: -1)
            await play.tick()
            #expect(try await uma.pro()["isActive"] as? Bool == true)
            uma.advance(days: 0, milliseconds: 1)
            await play.tick()
            let refunded = uma.day(3)
            #expect(
                try await uma.pro()
                    == uma.grant(
                        expires: refunded, active: false, willRenew: false,
                        reason: "inactive: monthly refunded \(Self.text(refunded)): reason not given"))
            #expect(
                try await uma.outcome()
                    == PlayLifecycle.Outcome(
                        accepted: 2, events: [uma.event("INITIAL_PURCHASE"), uma.event("REFUND")]))
        }
    }
}
