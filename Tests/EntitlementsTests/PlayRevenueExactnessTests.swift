import AppStoreModels
import Testing

@testable import Entitlements

/// Issue 15, Play revenue exactness: a voided record naming an order no read showed refunds no
/// other order (engine and analytics alike); a one-time purchase canceled before it was paid
/// brings no revenue; a voided record whose product type is not known yet applies to the
/// token's purchase.
@Suite struct PlayRevenueExactnessTests {
    typealias F = Fixture
    typealias P = PlayFixture

    private func charges(_ facts: [Fact], at instant: Double) -> [String] {
        var subscriptions: Set<PlaySubscriptionFact> = []
        var products: Set<PlayProductPurchaseFact> = []
        var voided: Set<PlayVoidedPurchaseFact> = []
        for fact in facts {
            switch fact {
            case .playSubscription(let value): subscriptions.insert(value)
            case .playProductPurchase(let value): products.insert(value)
            case .playVoidedPurchase(let value): voided.insert(value)
            default: break
            }
        }
        let ledger = PlayLedger(subscriptions: subscriptions, products: products, voided: voided)
        return PlayAnalyticsCharges(ledger: ledger, now: F.day(instant), catalog: F.catalog, rule: PlayCommissionRule())
            .charges.map {
                "\($0.orderId) gross=\($0.gross) proceeds=\($0.proceeds) refunded=\($0.refunded)"
                    + " refundedProceeds=\($0.refundedProceeds) refundedAt=\(F.label($0.refundedAt))"
                    + " active=\($0.active != nil)"
            }
    }

    @Test func aVoidedOrderNoReadShowedRefundsNoOtherOrder() {
        let facts = [
            P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
            P.voided(order: "GPA.9", at: 10, refund: .full),
        ]
        let evaluation = F.evaluate(facts, at: 11)
        let info = evaluation.customerInfo
        #expect(info.subscriptions["monthly"]?.status == .active)
        #expect(info.subscriptions["monthly"]?.isActive == true)
        #expect(info.subscriptions["monthly"]?.revocation == nil)
        #expect(info.revenue.map(Rendering.revenue) == ["GPA.1 price=9990 fee=15% proceeds=8492"])
        #expect(evaluation.allEvents.map(Rendering.event) == ["INITIAL_PURCHASE/GPA.1/monthly@d0 proceeds=8492"])
        #expect(
            info.notes.filter { $0.hasPrefix("voided order") } == [
                "voided order GPA.9 (\(F.day(10).humanReadable)) is not an order Storekeeper read for its purchase: "
                    + "kept, no revenue taken from another order"
            ])
        #expect(
            charges(facts, at: 11) == [
                "GPA.1 gross=9990 proceeds=8492 refunded=0 refundedProceeds=0 refundedAt=never active=true"
            ])

        // The read naming that order arrives: the refund is that order's, and ends access.
        let later = facts + [P.sub(read: 30.5, state: .active, expiry: 60, order: "GPA.9")]
        let settled = F.evaluate(later, at: 31)
        #expect(
            settled.customerInfo.revenue.map(Rendering.revenue) == [
                "GPA.1 price=9990 fee=15% proceeds=8492",
                "GPA.9 price=9990 fee=15% proceeds=8492 refunded=9990 net=0",
            ])
        #expect(settled.customerInfo.subscriptions["monthly"]?.status == .refunded)
        #expect(settled.customerInfo.notes.filter { $0.hasPrefix("voided order") } == [])
        #expect(
            charges(later, at: 31) == [
                "GPA.1 gross=9990 proceeds=8492 refunded=0 refundedProceeds=0 refundedAt=never active=true",
                "GPA.9 gross=9990 proceeds=8492 refunded=9990 refundedProceeds=8492 refundedAt=d10 active=false",
            ])
    }

    @Test func aVoidedOneTimeOrderOtherThanThePurchasesRefundsNothing() {
        let facts = [
            P.product("tok-life", "lifetime", order: "GPA.7", bought: 1, read: 1.5, state: .purchased),
            P.voided("tok-life", order: "GPA.70", at: 4, refund: .full, type: .oneTime, reason: 1),
        ]
        let evaluation = F.evaluate(facts, at: 6)
        #expect(
            evaluation.customerInfo.nonSubscriptionPurchases.map(Rendering.purchase) == [
                "lifetime tx=GPA.7 active"
            ])
        #expect(
            evaluation.customerInfo.revenue.map(Rendering.revenue) == ["GPA.7 price=149990 fee=15% proceeds=127492"])
        #expect(evaluation.allEvents.map(Rendering.event) == ["NON_CONSUMABLE_PURCHASE/GPA.7@d1 proceeds=127492"])
        #expect(evaluation.customerInfo.notes.filter { $0.hasPrefix("voided order GPA.70 ") }.count == 1)
        #expect(
            charges(facts, at: 6) == [
                "GPA.7 gross=149990 proceeds=127492 refunded=0 refundedProceeds=0 refundedAt=never active=false"
            ])
    }

    /// Google reports a pending purchase the buyer never paid as canceled
    /// (`ONE_TIME_PRODUCT_CANCELED`); it once counted as full revenue.
    @Test func aPendingPurchaseCanceledBeforePaymentBringsNoRevenue() {
        let canceled = [
            P.product("tok-p", "lifetime", order: "GPA.5", bought: 1, read: 1.5, state: .pending),
            P.product("tok-p", "lifetime", order: "GPA.5", bought: 1, read: 2.5, state: .canceled),
        ]
        let evaluation = F.evaluate(canceled, at: 3)
        #expect(evaluation.customerInfo.revenue.map(Rendering.revenue) == [])
        #expect(evaluation.allEvents.map(Rendering.event) == [])
        #expect(
            evaluation.customerInfo.nonSubscriptionPurchases.map(\.reason) == [
                "canceled on Google Play before it was paid: grants nothing, no revenue"
            ])
        #expect(charges(canceled, at: 3) == [])

        // Read purchased once: it was charged, and stays so when read canceled (its refund's
        // voided record, when it comes, takes the money back).
        let paid = [
            P.product("tok-p", "lifetime", order: "GPA.5", bought: 1, read: 1.5, state: .purchased),
            P.product("tok-p", "lifetime", order: "GPA.5", bought: 1, read: 2.5, state: .canceled),
        ]
        #expect(
            F.evaluate(paid, at: 3).customerInfo.revenue.map(Rendering.revenue) == [
                "GPA.5 price=149990 fee=15% proceeds=127492"
            ])
        let refunded = paid + [P.voided("tok-p", order: "GPA.5", at: 2.5, refund: .full, type: .oneTime)]
        #expect(
            F.evaluate(refunded, at: 3).customerInfo.revenue.map(Rendering.revenue) == [
                "GPA.5 price=149990 fee=15% proceeds=127492 refunded=149990 net=0"
            ])
        // Only ever read canceled, but voided: Google voids charges only.
        let onlyCanceled = [canceled[1], P.voided("tok-p", order: "GPA.5", at: 2.5, refund: .full, type: .oneTime)]
        #expect(
            charges(onlyCanceled, at: 3) == [
                "GPA.5 gross=149990 proceeds=127492 refunded=149990 refundedProceeds=127492 refundedAt=d2.5 active=false"
            ])
    }

    /// Listed before its token was read, a voided record has no product type: it still
    /// applies to the token's purchase, whichever kind it is.
    @Test func aVoidedRecordOfUnknownProductTypeApplies() {
        func untyped(_ token: String, order: String, at: Double) -> Fact {
            .playVoidedPurchase(
                PlayVoidedPurchaseFact(
                    packageName: P.package, purchaseToken: token, orderId: order, productType: nil,
                    voidedAt: F.day(at), voidedSource: 0, voidedReason: 1, refundType: .full))
        }
        let facts = [
            P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
            untyped("tok1", order: "GPA.1", at: 5),
            P.product("tok-life", "lifetime", order: "GPA.7", bought: 1, read: 1.5, state: .purchased),
            untyped("tok-life", order: "GPA.7", at: 4),
        ]
        let info = F.evaluate(facts, at: 6).customerInfo
        #expect(info.subscriptions["monthly"]?.status == .refunded)
        #expect(
            info.revenue.map(Rendering.revenue) == [
                "GPA.1 price=9990 fee=15% proceeds=8492 refunded=9990 net=0",
                "GPA.7 price=149990 fee=15% proceeds=127492 refunded=149990 net=0",
            ])
    }
}
