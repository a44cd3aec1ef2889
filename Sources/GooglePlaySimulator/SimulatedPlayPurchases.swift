import GooglePlayModels

/// One subscription purchase token in the Play simulator: what `subscriptionsv2.get` answers.
/// - Note: Value; `Sendable`.
public struct SimulatedPlaySubscription: Sendable, Hashable {
    public var token: String
    public var packageName: String
    public var productId: String
    public var basePlanId: String
    public var orderId: String
    /// Renewals so far: the latest order is `orderId..N` (Google's renewal order ids).
    public var renewals: Int
    public var state: SubscriptionState
    public var startMillis: Int64
    public var expiryMillis: Int64
    /// One billing period.
    public var periodMillis: Int64
    public var autoRenewing: Bool
    public var prepaid: Bool
    public var acknowledged: Bool
    public var linkedPurchaseToken: String?
    public var obfuscatedAccountId: String?
    public var canceledStateContext: CanceledStateContext?
    public var autoResumeMillis: Int64?
    /// When grace (if any) ends and hold begins, and when hold ends in expiry.
    public var graceEndsMillis: Int64?
    public var holdEndsMillis: Int64?
    public var testPurchase: Bool

    /// The order id of the latest successful payment.
    public var latestOrderId: String { renewals == 0 ? orderId : "\(orderId)..\(renewals - 1)" }

    /// The API's view of this purchase.
    public var purchase: SubscriptionPurchaseV2 {
        let plan: AutoRenewingPlan? =
            prepaid ? nil : AutoRenewingPlan(autoRenewEnabled: autoRenewing && state != .canceled)
        let item = SubscriptionPurchaseLineItem(
            productId: productId, expiryTime: GoogleDateTime(milliseconds: expiryMillis),
            latestSuccessfulOrderId: latestOrderId, autoRenewingPlan: plan,
            prepaidPlan: prepaid ? PrepaidPlan() : nil, offerDetails: OfferDetails(basePlanId: basePlanId))
        return SubscriptionPurchaseV2(
            regionCode: "US", lineItems: [item], startTime: GoogleDateTime(milliseconds: startMillis),
            subscriptionState: PlayRawEnum(state), linkedPurchaseToken: linkedPurchaseToken,
            pausedStateContext: state == .paused
                ? PausedStateContext(autoResumeTime: autoResumeMillis.map { GoogleDateTime(milliseconds: $0) }) : nil,
            canceledStateContext: state == .canceled || state == .expired ? canceledStateContext : nil,
            inGracePeriodStateContext: state == .inGracePeriod
                ? InGracePeriodStateContext(renewalDeclined: RenewalDeclinedContext(pendingOrderId: pendingOrderId))
                : nil,
            onHoldStateContext: state == .onHold
                ? OnHoldStateContext(renewalDeclined: RenewalDeclinedContext(pendingOrderId: pendingOrderId)) : nil,
            testPurchase: testPurchase ? TestPurchase() : nil,
            acknowledgementState: PlayRawEnum(acknowledged ? .acknowledged : .pending),
            externalAccountIdentifiers: obfuscatedAccountId.map {
                ExternalAccountIdentifiers(obfuscatedExternalAccountId: $0)
            },
            etag: "\(token)-\(renewals)-\(state.rawValue)")
    }

    /// The order that failed to pay while in grace or on hold.
    var pendingOrderId: String { "\(orderId)..\(renewals)" }
}

/// One one-time product purchase token in the Play simulator: what `products.get` answers.
/// - Note: Value; `Sendable`.
public struct SimulatedPlayProduct: Sendable, Hashable {
    public var token: String
    public var packageName: String
    public var productId: String
    public var orderId: String
    public var purchaseMillis: Int64
    public var quantity: Int32
    public var refundableQuantity: Int32
    public var state: ProductPurchaseState
    public var consumed: Bool
    public var acknowledged: Bool
    public var obfuscatedAccountId: String?
    public var developerPayload: String
    /// A license tester's purchase (`purchaseType` 0: the Sandbox environment), as the
    /// simulator's subscriptions are (`testPurchase`): both stores' purchases of one simulated
    /// customer land in one environment.
    public var testPurchase = true

    public var purchase: ProductPurchase {
        ProductPurchase(
            purchaseTimeMillis: EpochMillisString(milliseconds: purchaseMillis), purchaseState: PlayRawEnum(state),
            consumptionState: PlayRawEnum(consumed ? .consumed : .yetToBeConsumed),
            developerPayload: developerPayload, orderId: orderId, purchaseType: testPurchase ? PlayRawEnum(.test) : nil,
            acknowledgementState: PlayRawEnum(acknowledged ? .acknowledged : .yetToBeAcknowledged),
            purchaseToken: token, productId: productId, quantity: quantity,
            obfuscatedExternalAccountId: obfuscatedAccountId, regionCode: "US", refundableQuantity: refundableQuantity)
    }
}
