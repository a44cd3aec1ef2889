import AppStoreModels

@testable import Entitlements

/// Google Play facts for the engine's tests, on `Fixture`'s calendar (days after 2026-01-01).
enum PlayFixture {
    static let package = "com.example.app"

    /// A subscriptionsv2 snapshot of one line item.
    static func sub(
        _ token: String = "tok1", _ product: String = "monthly", read: Double, state: PlaySubscriptionState,
        expiry: Double?, order: String?, start: Double? = 0, autoRenew: Bool? = true, linked: String? = nil,
        cancel: PlayCancelReason? = nil, canceledAt: Double? = nil, resume: Double? = nil,
        phase: PlayOfferPhase? = nil, price: Int64? = nil, plan: PlayPlanType = .autoRenewing, test: Bool = false,
        acknowledged: Bool = true
    ) -> Fact {
        .playSubscription(
            PlaySubscriptionFact(
                packageName: package, purchaseToken: token, readAt: Fixture.day(read), state: RawEnum(state),
                startTime: start.map(Fixture.day),
                lineItems: [
                    PlaySubscriptionLineItem(
                        productId: product, expiryTime: expiry.map(Fixture.day),
                        autoRenewEnabled: plan == .prepaid ? nil : autoRenew, planType: plan, basePlanId: "base",
                        offerPhase: phase, latestSuccessfulOrderId: order,
                        recurringPrice: price.map { Money(milliunits: $0, currency: "USD") })
                ],
                isAcknowledged: acknowledged, linkedPurchaseToken: linked, cancelReason: cancel,
                canceledAt: canceledAt.map(Fixture.day), autoResumeTime: resume.map(Fixture.day), isTestPurchase: test,
                obfuscatedAccountId: "account-1"))
    }

    static func voided(
        _ token: String = "tok1", order: String?, at: Double, refund: PlayRefundType? = .full, quantity: Int? = nil,
        type: PlayProductType = .subscription, reason: Int? = nil
    ) -> Fact {
        .playVoidedPurchase(
            PlayVoidedPurchaseFact(
                packageName: package, purchaseToken: token, orderId: order, productType: type,
                voidedAt: Fixture.day(at), voidedSource: 0, voidedReason: reason, refundType: refund,
                voidedQuantity: quantity))
    }

    static func product(
        _ token: String, _ product: String, order: String?, bought: Double, read: Double, state: PlayPurchaseState,
        quantity: Int = 1
    ) -> Fact {
        .playProductPurchase(
            PlayProductPurchaseFact(
                packageName: package, purchaseToken: token, productId: product, orderId: order,
                readAt: Fixture.day(read), purchaseTime: Fixture.day(bought), purchaseState: RawEnum(state),
                isAcknowledged: true, quantity: quantity))
    }

    static func ms(_ day: Double) -> Int64 { Fixture.day(day).millisecondsSince1970 }
}
