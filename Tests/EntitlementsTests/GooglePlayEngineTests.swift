import AppStoreModels
import Foundation
import Testing

@testable import Entitlements

/// Issue 15: Google Play snapshots, one-time purchases and voided purchases through the engine:
/// exact entitlements, subscriptions and events for each Play lifecycle, and App Store and Play
/// purchases meeting in one customer.
@Suite struct GooglePlayEngineTests {
    typealias F = Fixture
    typealias P = PlayFixture

    private func entitlements(_ info: CustomerInfo) -> [String] {
        info.entitlements.values.sorted { $0.entitlementId < $1.entitlementId }.map {
            Rendering.entitlement($0) + " store=\($0.store?.rawValue ?? "-")"
        }
    }

    private func subscriptions(_ info: CustomerInfo) -> [String] {
        info.subscriptions.values.sorted { $0.productId < $1.productId }.map {
            Rendering.subscription($0) + " active=\($0.isActive) store=\($0.store?.rawValue ?? "-")"
        }
    }

    private func events(_ evaluation: EntitlementEvaluation) -> [String] {
        evaluation.allEvents.map {
            Rendering.event($0) + ($0.store == .playStore ? "" : " store=\($0.store?.rawValue ?? "-")")
        }
    }

    @Test func purchaseGrantsUntilTheExpiryWithGooglesFee() {
        let facts = [P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1")]
        let evaluation = F.evaluate(facts, at: 1)
        #expect(
            entitlements(evaluation.customerInfo) == ["pro active monthly until=d30 NORMAL renews store=play_store"])
        #expect(subscriptions(evaluation.customerInfo) == ["monthly ACTIVE tx=GPA.1 active=true store=play_store"])
        #expect(events(evaluation) == ["INITIAL_PURCHASE/GPA.1/monthly@d0 proceeds=8492"])
        #expect(evaluation.customerInfo.revenue.map(Rendering.revenue) == ["GPA.1 price=9990 fee=15% proceeds=8492"])
        #expect(evaluation.customerInfo.revenue.map(\.store) == [.playStore])
        #expect(evaluation.customerInfo.subscriptions["monthly"]?.originalTransactionId == "tok1")
        #expect(evaluation.customerInfo.nextScheduledChange == F.day(30))
    }

    /// Google lists voids per order: a full refund of an earlier charge takes that charge's money
    /// back and leaves the subscription running (it once ended access for good, status
    /// REFUNDED, while Google said ACTIVE).
    @Test func aFullRefundOfAnEarlierOrderDoesNotEndTheSubscription() {
        let facts = [
            P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
            P.sub(read: 30.5, state: .active, expiry: 60, order: "GPA.1..0"),
            P.voided(order: "GPA.1", at: 40, refund: .full),
            P.sub(read: 60.5, state: .active, expiry: 90, order: "GPA.1..1"),
        ]
        let evaluation = F.evaluate(facts, at: 61)
        #expect(
            entitlements(evaluation.customerInfo) == ["pro active monthly until=d90 NORMAL renews store=play_store"])
        #expect(subscriptions(evaluation.customerInfo) == ["monthly ACTIVE tx=GPA.1..1 active=true store=play_store"])
        #expect(evaluation.customerInfo.subscriptions["monthly"]?.revocation == nil)
        #expect(
            evaluation.customerInfo.revenue.map(Rendering.revenue) == [
                "GPA.1 price=9990 fee=15% proceeds=8492 refunded=9990 net=0",
                "GPA.1..0 price=9990 fee=15% proceeds=8492", "GPA.1..1 price=9990 fee=15% proceeds=8492",
            ])
        // A full void of the latest order still ends access.
        let refundedNow = F.evaluate(facts + [P.voided(order: "GPA.1..1", at: 61, refund: .full)], at: 62)
        #expect(refundedNow.customerInfo.subscriptions["monthly"]?.isActive == false)
        #expect(refundedNow.customerInfo.subscriptions["monthly"]?.status == .refunded)
    }

    /// A lagging read can name an earlier order than the newest one: its hold (or pause) time
    /// is then on that earlier order, and the state came from a force-unwrap of the newest
    /// order's, which crashed the process on every evaluation of the customer.
    @Test func aLaggingHoldOrPauseReadOfAnEarlierOrderDoesNotCrash() {
        for state in [PlaySubscriptionState.onHold, .paused] {
            let facts = [
                P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
                P.sub(read: 30.5, state: .active, expiry: 60, order: "GPA.1..0"),
                P.sub(read: 31, state: state, expiry: 30, order: "GPA.1"),
            ]
            let evaluation = F.evaluate(facts, at: 32)
            #expect(evaluation.customerInfo.subscriptions["monthly"]?.isActive == false, "\(state)")
            #expect(evaluation.customerInfo.entitlements["pro"]?.isActive != true, "\(state)")
        }
    }

    @Test func renewalIsANewOrder() {
        let facts = [
            P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
            P.sub(read: 30.5, state: .active, expiry: 60, order: "GPA.1..0"),
        ]
        let evaluation = F.evaluate(facts, at: 31)
        #expect(
            entitlements(evaluation.customerInfo) == ["pro active monthly until=d60 NORMAL renews store=play_store"])
        #expect(
            events(evaluation) == [
                "INITIAL_PURCHASE/GPA.1/monthly@d0 proceeds=8492", "RENEWAL/GPA.1..0/monthly@d30 proceeds=8492",
            ])
        // Between the expiry and the read of the renewal, time alone ends access.
        let beforeRead = F.evaluate(facts, at: 30.25)
        #expect(events(beforeRead).last == "EXPIRATION/GPA.1/monthly@d30 UNKNOWN")
        #expect(evaluation.retractedEventIds == [])
        let after = F.evaluate(facts, at: 31, previous: beforeRead.customerInfo)
        #expect(after.retractedEventIds == ["EXPIRATION/GPA.1/monthly"])
    }

    @Test func graceKeepsAccessHoldEndsItAndRecoveryRenews() {
        let grace = [
            P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
            P.sub(read: 30.5, state: .inGracePeriod, expiry: 37, order: "GPA.1"),
        ]
        let inGrace = F.evaluate(grace, at: 31)
        #expect(
            entitlements(inGrace.customerInfo) == [
                "pro active monthly until=d37 NORMAL renews billing=d30.5 grace=d37 store=play_store"
            ])
        #expect(
            subscriptions(inGrace.customerInfo) == ["monthly IN_GRACE_PERIOD tx=GPA.1 active=true store=play_store"])
        #expect(
            events(inGrace) == [
                "INITIAL_PURCHASE/GPA.1/monthly@d0 proceeds=8492", "BILLING_ISSUE/GPA.1/monthly@d30.5",
                "GRACE_PERIOD_STARTED/GPA.1/monthly@d30.5",
            ])

        let hold = grace + [P.sub(read: 37.5, state: .onHold, expiry: 37, order: "GPA.1")]
        let onHold = F.evaluate(hold, at: 38, previous: inGrace.customerInfo)
        #expect(
            entitlements(onHold.customerInfo) == [
                "pro inactive monthly until=d37 NORMAL renews billing=d30.5 store=play_store"
            ])
        #expect(
            subscriptions(onHold.customerInfo) == [
                "monthly IN_BILLING_RETRY tx=GPA.1 active=false store=play_store"
            ])
        #expect(onHold.newEvents.map(Rendering.event) == ["EXPIRATION/GPA.1/monthly@d37 BILLING_ERROR"])

        let recovered = hold + [P.sub(read: 40.5, state: .active, expiry: 70.5, order: "GPA.1..0")]
        let recovery = F.evaluate(recovered, at: 41, previous: onHold.customerInfo)
        #expect(
            entitlements(recovery.customerInfo) == ["pro active monthly until=d70.5 NORMAL renews store=play_store"])
        #expect(
            recovery.newEvents.map(Rendering.event) == [
                "BILLING_RECOVERED/GPA.1..0/monthly@d40.5", "RENEWAL/GPA.1..0/monthly@d40.5 proceeds=8492",
            ])
    }

    @Test func pauseEndsAccessWithThePaidPeriodAndResumeRenews() {
        let paused = [
            P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
            P.sub(read: 30.5, state: .paused, expiry: 30, order: "GPA.1", resume: 60),
        ]
        let evaluation = F.evaluate(paused, at: 31)
        #expect(
            entitlements(evaluation.customerInfo) == ["pro inactive monthly until=d30 NORMAL renews store=play_store"])
        #expect(subscriptions(evaluation.customerInfo) == ["monthly PAUSED tx=GPA.1 active=false store=play_store"])
        #expect(
            events(evaluation) == [
                "INITIAL_PURCHASE/GPA.1/monthly@d0 proceeds=8492", "EXPIRATION/GPA.1/monthly@d30 PAUSED",
                "SUBSCRIPTION_PAUSED/GPA.1/monthly@d30.5",
            ])
        let resumed = paused + [P.sub(read: 60.5, state: .active, expiry: 90, order: "GPA.1..0")]
        let resumption = F.evaluate(resumed, at: 61, previous: evaluation.customerInfo)
        #expect(
            entitlements(resumption.customerInfo) == ["pro active monthly until=d90 NORMAL renews store=play_store"])
        #expect(resumption.newEvents.map(Rendering.event) == ["RENEWAL/GPA.1..0/monthly@d60.5 proceeds=8492"])
    }

    @Test func cancelKeepsAccessUntilTheExpiryThenExpires() {
        let canceled = [
            P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
            P.sub(
                read: 10.5, state: .canceled, expiry: 30, order: "GPA.1", autoRenew: false, cancel: .user,
                canceledAt: 10),
        ]
        let evaluation = F.evaluate(canceled, at: 11)
        #expect(
            entitlements(evaluation.customerInfo) == [
                "pro active monthly until=d30 NORMAL no-renew unsub=d10 store=play_store"
            ])
        #expect(
            events(evaluation) == [
                "INITIAL_PURCHASE/GPA.1/monthly@d0 proceeds=8492", "CANCELLATION/GPA.1/monthly/\(P.ms(10))@d10",
            ])
        // Time alone ends it at the expiry; the EXPIRED read afterwards adds nothing.
        let byTime = F.evaluate(canceled, at: 30.25, previous: evaluation.customerInfo)
        #expect(byTime.newEvents.map(Rendering.event) == ["EXPIRATION/GPA.1/monthly@d30 CUSTOMER_CANCELLED"])
        let expired =
            canceled + [
                P.sub(
                    read: 30.5, state: .expired, expiry: 30, order: "GPA.1", autoRenew: false, cancel: .user,
                    canceledAt: 10)
            ]
        let afterRead = F.evaluate(expired, at: 31, previous: byTime.customerInfo)
        #expect(afterRead.newEvents == [])
        #expect(afterRead.retractedEventIds == [])
        #expect(
            subscriptions(afterRead.customerInfo) == [
                "monthly EXPIRED tx=GPA.1 why=CUSTOMER_CANCELLED active=false store=play_store"
            ])
    }

    @Test func revocationIsAFullRefundThatEndsAccess() {
        let facts = [
            P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
            P.voided(order: "GPA.1", at: 5, refund: .full, reason: 3),
            P.sub(read: 5.5, state: .expired, expiry: 5, order: "GPA.1", autoRenew: false, cancel: .developer),
        ]
        let evaluation = F.evaluate(facts, at: 6)
        #expect(
            entitlements(evaluation.customerInfo) == [
                "pro inactive monthly until=d5 NORMAL no-renew store=play_store"
            ])
        #expect(
            subscriptions(evaluation.customerInfo) == [
                "monthly REFUNDED tx=GPA.1 revoked=REFUND@d5:DEVELOPER_ISSUE active=false store=play_store"
            ])
        #expect(
            events(evaluation) == [
                "INITIAL_PURCHASE/GPA.1/monthly@d0 proceeds=8492",
                "REFUND/GPA.1/monthly@d5 DEVELOPER_ISSUE proceeds=-8492",
            ])
        #expect(
            evaluation.customerInfo.revenue.map(Rendering.revenue) == [
                "GPA.1 price=9990 fee=15% proceeds=8492 refunded=9990 net=0"
            ])
    }

    /// Review finding: the line items of one purchase share its orders, and events were keyed
    /// by the order alone: the second line item's INITIAL_PURCHASE had the first one's id and
    /// was dropped as a duplicate. The product id follows the order in each key.
    @Test func eachLineItemOfOnePurchaseHasItsOwnEvents() {
        let read = Fact.playSubscription(
            PlaySubscriptionFact(
                packageName: P.package, purchaseToken: "tok1", readAt: Fixture.day(0.5), state: RawEnum(.active),
                startTime: Fixture.day(0),
                lineItems: ["monthly", "monthly_alt"].map {
                    PlaySubscriptionLineItem(
                        productId: $0, expiryTime: Fixture.day(30), autoRenewEnabled: true,
                        latestSuccessfulOrderId: "GPA.1")
                }, isAcknowledged: true))
        let evaluation = F.evaluate([read], at: 1)
        #expect(
            events(evaluation) == [
                "INITIAL_PURCHASE/GPA.1/monthly@d0 proceeds=8492",
                "INITIAL_PURCHASE/GPA.1/monthly_alt@d0 proceeds=8492",
            ])
        let expired = F.evaluate([read], at: 31)
        #expect(
            events(expired).filter { $0.hasPrefix("EXPIRATION/") } == [
                "EXPIRATION/GPA.1/monthly@d30 UNKNOWN", "EXPIRATION/GPA.1/monthly_alt@d30 UNKNOWN",
            ])
    }

    /// Review finding: a SUBSCRIPTION_REVOKED notification (a full refund at the event time,
    /// no reason) and the voided-purchases record of the same order (its own voided time and
    /// reason) were two REFUND events taking the money back twice. One refund per order.
    @Test func aRevocationAndItsVoidedRecordAreOneRefund() {
        let facts = [
            P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
            P.voided(order: "GPA.1", at: 5, refund: .full),
            P.voided(order: "GPA.1", at: 5.25, refund: nil, reason: 1),
            P.sub(read: 5.5, state: .expired, expiry: 5, order: "GPA.1", autoRenew: false, cancel: .developer),
        ]
        let evaluation = F.evaluate(facts, at: 6)
        #expect(
            events(evaluation) == [
                "INITIAL_PURCHASE/GPA.1/monthly@d0 proceeds=8492", "REFUND/GPA.1/monthly@d5 OTHER proceeds=-8492",
            ])
        #expect(
            evaluation.customerInfo.revenue.map(Rendering.revenue) == [
                "GPA.1 price=9990 fee=15% proceeds=8492 refunded=9990 net=0"
            ])
    }

    /// Review finding: an order's refunded figure was its largest partial refund while the
    /// REFUND events each took their own share (two one-unit refunds of three units: the events
    /// took two thirds, the revenue one). The figure is now the sum, and each event carries the
    /// difference of the order's refunded amount before and after it, so they agree exactly.
    @Test func partialRefundsAddUpInRevenueAndEvents() {
        let bought = P.product(
            "tok-coins", "coins_100", order: "GPA.8", bought: 2, read: 2.5, state: .purchased, quantity: 3)
        let partial = [
            P.voided("tok-coins", order: "GPA.8", at: 4, refund: .quantityBasedPartial, quantity: 1, type: .oneTime),
            P.voided("tok-coins", order: "GPA.8", at: 5, refund: .quantityBasedPartial, quantity: 1, type: .oneTime),
        ]
        let twice = F.evaluate([bought] + partial, at: 6)
        #expect(
            events(twice) == [
                "CONSUMABLE_PURCHASE/GPA.8@d2 proceeds=2525", "REFUND/GPA.8/\(P.ms(4))@d4 UNKNOWN proceeds=-842",
                "REFUND/GPA.8/\(P.ms(5))@d5 UNKNOWN proceeds=-841",
            ])
        #expect(
            twice.customerInfo.revenue.map(Rendering.revenue) == [
                "GPA.8 price=2970 fee=15% proceeds=2525 refunded=1980 net=842"
            ])
        // A full refund after them takes what is left; a later record of it changes nothing.
        let full = [
            P.voided("tok-coins", order: "GPA.8", at: 6, refund: .full, type: .oneTime),
            P.voided("tok-coins", order: "GPA.8", at: 7, refund: .quantityBasedPartial, quantity: 1, type: .oneTime),
        ]
        let all = F.evaluate([bought] + partial + full, at: 8)
        #expect(
            events(all) == [
                "CONSUMABLE_PURCHASE/GPA.8@d2 proceeds=2525", "REFUND/GPA.8/\(P.ms(4))@d4 UNKNOWN proceeds=-842",
                "REFUND/GPA.8/\(P.ms(5))@d5 UNKNOWN proceeds=-841", "REFUND/GPA.8@d6 UNKNOWN proceeds=-842",
            ])
        #expect(
            all.customerInfo.revenue.map(Rendering.revenue) == [
                "GPA.8 price=2970 fee=15% proceeds=2525 refunded=2970 net=0"
            ])
        let refunded = all.allEvents.filter { $0.type == .refund }
        #expect(refunded.compactMap(\.proceeds?.milliunits).reduce(0, +) == -2525)
        #expect(refunded.compactMap(\.price?.milliunits).reduce(0, +) == -2970)
    }

    /// Review finding: `subscriptions` is keyed by product id, and a customer subscribed to the
    /// same product id in both stores saw only one of the two. The App Store one keeps the plain
    /// key; the Play one is beside it under `play_store:<productId>`.
    @Test func theSameProductInBothStoresShowsBothSubscriptions() {
        let facts: [Fact] = [
            F.tx("t1", "monthly", 0, 30),
            P.sub("tok1", "monthly", read: 5.5, state: .active, expiry: 35, order: "GPA.1", start: 5),
        ]
        let info = F.evaluate(facts, at: 20).customerInfo
        #expect(info.subscriptions.keys.sorted() == ["monthly", "play_store:monthly"])
        #expect(info.subscriptions["monthly"].map(Rendering.subscription) == "monthly ACTIVE tx=t1")
        #expect(info.subscriptions["play_store:monthly"].map(Rendering.subscription) == "monthly ACTIVE tx=GPA.1")
        #expect(info.subscriptions["play_store:monthly"]?.store == .playStore)
        // Play alone keeps the plain key.
        let playOnly = F.evaluate(Array(facts.dropFirst()), at: 20).customerInfo
        #expect(playOnly.subscriptions.keys.sorted() == ["monthly"])
    }

    @Test func voidedOneTimePurchasesFullAndPartial() {
        let facts = [
            P.product("tok-life", "lifetime", order: "GPA.7", bought: 1, read: 1.5, state: .purchased),
            P.product("tok-coins", "coins_100", order: "GPA.8", bought: 2, read: 2.5, state: .purchased, quantity: 3),
            P.voided("tok-life", order: "GPA.7", at: 4, refund: .full, type: .oneTime, reason: 1),
            P.voided(
                "tok-coins", order: "GPA.8", at: 5, refund: .quantityBasedPartial, quantity: 1, type: .oneTime,
                reason: 4),
        ]
        let evaluation = F.evaluate(facts, at: 6)
        #expect(
            evaluation.customerInfo.nonSubscriptionPurchases.map {
                Rendering.purchase($0) + " store=\($0.store?.rawValue ?? "-")"
            } == [
                "lifetime tx=GPA.7 inactive not-restorable revoked=REFUND store=play_store",
                "coins_100 tx=GPA.8 inactive not-restorable store=play_store",
            ])
        #expect(
            entitlements(evaluation.customerInfo) == [
                "lifetime inactive lifetime until=d4 NORMAL no-renew store=play_store",
                "pro inactive lifetime until=d4 NORMAL no-renew store=play_store",
            ])
        #expect(
            events(evaluation) == [
                "NON_CONSUMABLE_PURCHASE/GPA.7@d1 proceeds=127492", "CONSUMABLE_PURCHASE/GPA.8@d2 proceeds=2525",
                "REFUND/GPA.7@d4 OTHER proceeds=-127492", "REFUND/GPA.8/\(P.ms(5))@d5 OTHER proceeds=-842",
            ])
        #expect(
            evaluation.customerInfo.revenue.map(Rendering.revenue) == [
                "GPA.7 price=149990 fee=15% proceeds=127492 refunded=149990 net=0",
                "GPA.8 price=2970 fee=15% proceeds=2525 refunded=990 net=1683",
            ])
    }

    @Test func upgradeThroughALinkedTokenStopsTheOldToken() {
        let facts = [
            P.sub("tok1", "monthly", read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
            P.sub(
                "tok1", "monthly", read: 10.5, state: .canceled, expiry: 10, order: "GPA.1", autoRenew: false,
                cancel: .replacement),
            P.sub(
                "tok2", "plus_monthly", read: 10.5, state: .active, expiry: 40, order: "GPA.2", start: 10,
                linked: "tok1"),
        ]
        let evaluation = F.evaluate(facts, at: 11)
        #expect(
            entitlements(evaluation.customerInfo) == [
                "plus active plus_monthly until=d40 NORMAL renews store=play_store",
                "pro active plus_monthly until=d40 NORMAL renews store=play_store",
            ])
        #expect(
            subscriptions(evaluation.customerInfo) == [
                "monthly PRODUCT_CHANGED tx=GPA.1 active=false store=play_store",
                "plus_monthly ACTIVE tx=GPA.2 active=true store=play_store",
            ])
        #expect(
            events(evaluation) == [
                "INITIAL_PURCHASE/GPA.1/monthly@d0 proceeds=8492",
                "PRODUCT_CHANGE/GPA.2/plus_monthly@d10 UPGRADE/IMMEDIATE proceeds=12742",
            ])
    }

    @Test func deferredRenewalIsALaterExpiryUnderTheSameOrder() {
        let facts = [
            P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
            P.sub(read: 20.5, state: .active, expiry: 45, order: "GPA.1"),
        ]
        let evaluation = F.evaluate(facts, at: 35)
        #expect(
            entitlements(evaluation.customerInfo) == ["pro active monthly until=d45 NORMAL renews store=play_store"])
        #expect(
            events(evaluation) == [
                "INITIAL_PURCHASE/GPA.1/monthly@d0 proceeds=8492",
                "SUBSCRIPTION_EXTENDED/GPA.1/monthly/\(P.ms(45))@d20.5",
            ])
    }

    @Test func pendingGrantsNothingUntilPaid() {
        let pending = [P.sub(read: 0.5, state: .pending, expiry: nil, order: nil, start: nil)]
        let waiting = F.evaluate(pending, at: 1)
        #expect(subscriptions(waiting.customerInfo) == ["monthly PENDING tx=tok1 active=false store=play_store"])
        #expect(waiting.customerInfo.activeEntitlementIds == [])
        #expect(events(waiting) == [])
        let paid = pending + [P.sub(read: 1.5, state: .active, expiry: 31, order: "GPA.1", start: 1.25)]
        #expect(events(F.evaluate(paid, at: 2)) == ["INITIAL_PURCHASE/GPA.1/monthly@d1.25 proceeds=8492"])
    }

    @Test func appStoreAndPlayToOneEntitlementLastUntilBothEnd() {
        let facts: [Fact] = [
            F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 10, autoRenew: false),
            P.sub("tok1", "monthly_alt", read: 5.5, state: .active, expiry: 35, order: "GPA.1", start: 5),
            P.sub(
                "tok1", "monthly_alt", read: 6.5, state: .canceled, expiry: 35, order: "GPA.1", start: 5,
                autoRenew: false, cancel: .user, canceledAt: 6),
        ]
        // Both active: the entitlement shows the grant that lasts longer (Play, until d35).
        let both = F.evaluate(facts, at: 20)
        #expect(
            entitlements(both.customerInfo) == [
                "pro active monthly_alt until=d35 NORMAL no-renew unsub=d6 store=play_store"
            ])
        #expect(
            subscriptions(both.customerInfo) == [
                "monthly ACTIVE tx=t1 active=true store=-",
                "monthly_alt ACTIVE tx=GPA.1 active=true store=play_store",
            ])
        let appStoreEnded = F.evaluate(facts, at: 31)
        #expect(appStoreEnded.customerInfo.activeEntitlementIds == ["pro"])
        #expect(appStoreEnded.customerInfo.entitlements["pro"]?.store == .playStore)
        let bothEnded = F.evaluate(facts, at: 36)
        #expect(bothEnded.customerInfo.activeEntitlementIds == [])
        #expect(
            events(bothEnded) == [
                "INITIAL_PURCHASE/t1@d0 proceeds=6993 store=-", "INITIAL_PURCHASE/GPA.1/monthly_alt@d5 proceeds=8492",
                "CANCELLATION/GPA.1/monthly_alt/\(P.ms(6))@d6", "CANCELLATION/t1/\(P.ms(10))@d10 store=-",
                "EXPIRATION/t1@d30 CUSTOMER_CANCELLED store=-", "EXPIRATION/GPA.1/monthly_alt@d35 CUSTOMER_CANCELLED",
            ])
        // The App Store grant lasting longer is the one shown, with no `store` (the App Store).
        let longerApple = F.evaluate([F.tx("t1", "monthly", 0, 40)] + facts.dropFirst(2), at: 20)
        #expect(
            entitlements(longerApple.customerInfo) == ["pro active monthly until=d40 NORMAL renews store=-"])
    }

    @Test func theSameSnapshotsInAnyOrderGiveTheSameState() {
        let facts: [Fact] = [
            P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
            P.sub(read: 30.5, state: .inGracePeriod, expiry: 37, order: "GPA.1"),
            P.sub(read: 37.5, state: .onHold, expiry: 37, order: "GPA.1"),
            P.sub(read: 40.5, state: .active, expiry: 70.5, order: "GPA.1..0"),
            // Two reads at one instant that differ: the canonical order picks one, whatever arrives first.
            P.sub(read: 50.5, state: .canceled, expiry: 70.5, order: "GPA.1..0", autoRenew: false, cancel: .user),
            P.sub(read: 50.5, state: .active, expiry: 70.5, order: "GPA.1..0"),
            P.voided(order: "GPA.1", at: 60, refund: .quantityBasedPartial, quantity: nil),
        ]
        let reference = AppStoreJSON.encode(F.evaluate(facts, at: 55))
        var generator = SeededGenerator(seed: 15)
        for _ in 0..<40 {
            let shuffled = (facts + facts.prefix(2)).shuffled(using: &generator)
            #expect(AppStoreJSON.encode(F.evaluate(shuffled, at: 55)) == reference)
        }
    }

    @Test func testPurchasesAreTheSandbox() {
        let facts = [P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1", test: true)]
        #expect(F.evaluate(facts, at: 1).customerInfo.activeEntitlementIds == [])
        #expect(F.evaluate(facts, at: 1, environment: .sandbox).customerInfo.activeEntitlementIds == ["pro"])
    }

    @Test func appStoreOutputHasNoStoreField() throws {
        let evaluation = F.evaluate([F.tx("t1", "monthly", 0, 30), F.tx("t2", "lifetime", 1)], at: 2)
        let json = String(decoding: AppStoreJSON.encode(evaluation.customerInfo), as: UTF8.self)
        #expect(!json.contains("\"store\""))
        let events = String(decoding: AppStoreJSON.encode(evaluation.allEvents), as: UTF8.self)
        #expect(!events.contains("\"store\""))
        let play = F.evaluate([P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1")], at: 1)
        let playJSON = String(decoding: AppStoreJSON.encode(play.customerInfo), as: UTF8.self)
        #expect(playJSON.contains("\"store\":\"play_store\""))
    }

    @Test func playCommissionRule() {
        let rule = PlayCommissionRule(thresholdCrossings: [CalendarDay(year: 2026, month: 6, day: 1)])
        let may = F.day(130)
        let june = F.day(160)
        let nextYear = F.day(370)
        #expect(rule.decision(isAutoRenewing: true, purchaseDate: june, isPaid: true).basisPoints == 1500)
        #expect(rule.decision(isAutoRenewing: false, purchaseDate: may, isPaid: true).basisPoints == 1500)
        #expect(rule.decision(isAutoRenewing: false, purchaseDate: june, isPaid: true).reason == .aboveMillionOfTheYear)
        #expect(rule.decision(isAutoRenewing: false, purchaseDate: june, isPaid: true).basisPoints == 3000)
        #expect(rule.decision(isAutoRenewing: false, purchaseDate: nextYear, isPaid: true).basisPoints == 1500)
        #expect(rule.decision(isAutoRenewing: false, purchaseDate: june, isPaid: false).basisPoints == 0)
    }
}
