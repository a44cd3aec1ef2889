import AppStoreModels

/// `subscriptionState` of a SubscriptionPurchaseV2, as Google names it.
/// - Note: Immutable value; `Sendable`.
public enum PlaySubscriptionState: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "SUBSCRIPTION_STATE_UNSPECIFIED"
    case pending = "SUBSCRIPTION_STATE_PENDING"
    case active = "SUBSCRIPTION_STATE_ACTIVE"
    case paused = "SUBSCRIPTION_STATE_PAUSED"
    case inGracePeriod = "SUBSCRIPTION_STATE_IN_GRACE_PERIOD"
    case onHold = "SUBSCRIPTION_STATE_ON_HOLD"
    case canceled = "SUBSCRIPTION_STATE_CANCELED"
    case expired = "SUBSCRIPTION_STATE_EXPIRED"
    case pendingPurchaseCanceled = "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"
}

/// Which member of `canceledStateContext` Google set.
/// - Note: Immutable value; `Sendable`.
public enum PlayCancelReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// `userInitiatedCancellation`: the customer turned auto-renew off.
    case user = "USER"
    /// `systemInitiatedCancellation`: a billing problem, for example.
    case system = "SYSTEM"
    /// `developerInitiatedCancellation`.
    case developer = "DEVELOPER"
    /// `replacementCancellation`: replaced by a new subscription (upgrade, downgrade).
    case replacement = "REPLACEMENT"
}

/// How a line item is billed: `autoRenewingPlan` (with `installmentDetails` when paid in
/// installments) or `prepaidPlan`.
/// - Note: Immutable value; `Sendable`.
public enum PlayPlanType: String, Sendable, Hashable, Codable, CaseIterable {
    case autoRenewing = "AUTO_RENEWING"
    case installment = "INSTALLMENT"
    case prepaid = "PREPAID"
}

/// `offerPhase` of a line item: which price the current period is charged at.
/// - Note: Immutable value; `Sendable`.
public enum PlayOfferPhase: String, Sendable, Hashable, Codable, CaseIterable {
    case basePrice = "BASE_PRICE"
    case freeTrial = "FREE_TRIAL"
    case introductoryPrice = "INTRODUCTORY_PRICE"
    case prorationPeriod = "PRORATION_PERIOD"
}

/// One `lineItems` entry of a SubscriptionPurchaseV2.
/// - Note: Immutable value; `Sendable`.
public struct PlaySubscriptionLineItem: Sendable, Hashable, Codable {
    public var productId: String
    /// `expiryTime`: when access ends unless extended (a renewal, a deferral). In a grace
    /// period Google moves it to the end of the grace period.
    public var expiryTime: Timestamp?
    /// `autoRenewingPlan.autoRenewEnabled`; `nil` for a prepaid plan.
    public var autoRenewEnabled: Bool?
    public var planType: PlayPlanType
    public var basePlanId: String?
    public var offerId: String?
    public var offerPhase: PlayOfferPhase?
    /// `latestSuccessfulOrderId`: one per charge (`GPA.…`, renewals add `..0`, `..1`); absent
    /// while nothing was charged (pending). A later expiry under the same order id is a deferral.
    public var latestSuccessfulOrderId: String?
    /// `autoRenewingPlan.recurringPrice`, when Google shows it.
    public var recurringPrice: Money?

    public init(
        productId: String, expiryTime: Timestamp?, autoRenewEnabled: Bool?, planType: PlayPlanType = .autoRenewing,
        basePlanId: String? = nil, offerId: String? = nil, offerPhase: PlayOfferPhase? = nil,
        latestSuccessfulOrderId: String?, recurringPrice: Money? = nil
    ) {
        self.productId = productId
        self.expiryTime = expiryTime
        self.autoRenewEnabled = autoRenewEnabled
        self.planType = planType
        self.basePlanId = basePlanId
        self.offerId = offerId
        self.offerPhase = offerPhase
        self.latestSuccessfulOrderId = latestSuccessfulOrderId
        self.recurringPrice = recurringPrice
    }
}

/// What `purchases.subscriptionsv2.get` answered for one purchase token, and when it was read.
///
/// Google's notifications carry no state; every snapshot is a read of the API. The latest
/// read of a token wins (`readAt`, ties by canonical JSON); earlier reads are its history and
/// give the events (renewals, grace, hold, pause, cancellation). The verbatim JSON is kept by
/// the store beside this fact.
/// - Note: Immutable value; `Sendable`.
public struct PlaySubscriptionFact: Sendable, Hashable, Codable {
    public var packageName: String
    public var purchaseToken: String
    /// When the API answered (the caller's clock at the response).
    public var readAt: Timestamp
    /// `subscriptionState`, unknown values kept as sent.
    public var state: RawEnum<PlaySubscriptionState>
    /// `startTime`; absent while pending.
    public var startTime: Timestamp?
    public var lineItems: [PlaySubscriptionLineItem]
    /// `acknowledgementState == ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED`.
    public var isAcknowledged: Bool
    /// The token this one replaces (upgrade, downgrade, resubscription, plan conversion): that
    /// token stops granting.
    public var linkedPurchaseToken: String?
    public var cancelReason: PlayCancelReason?
    /// `userInitiatedCancellation.cancelTime`.
    public var canceledAt: Timestamp?
    /// `pausedStateContext.autoResumeTime`.
    public var autoResumeTime: Timestamp?
    /// `testPurchase` present: a license tester's purchase (the sandbox environment).
    public var isTestPurchase: Bool
    /// `externalAccountIdentifiers.obfuscatedExternalAccountId`: plays the role of Apple's
    /// `appAccountToken` in the identity rules.
    public var obfuscatedAccountId: String?
    public var obfuscatedProfileId: String?
    public var externalAccountId: String?
    /// ISO 3166-1 alpha-2 billing country.
    public var regionCode: String?

    public init(
        packageName: String, purchaseToken: String, readAt: Timestamp, state: RawEnum<PlaySubscriptionState>,
        startTime: Timestamp?, lineItems: [PlaySubscriptionLineItem], isAcknowledged: Bool,
        linkedPurchaseToken: String? = nil, cancelReason: PlayCancelReason? = nil, canceledAt: Timestamp? = nil,
        autoResumeTime: Timestamp? = nil, isTestPurchase: Bool = false, obfuscatedAccountId: String? = nil,
        obfuscatedProfileId: String? = nil, externalAccountId: String? = nil, regionCode: String? = nil
    ) {
        self.packageName = packageName
        self.purchaseToken = purchaseToken
        self.readAt = readAt
        self.state = state
        self.startTime = startTime
        self.lineItems = lineItems
        self.isAcknowledged = isAcknowledged
        self.linkedPurchaseToken = linkedPurchaseToken
        self.cancelReason = cancelReason
        self.canceledAt = canceledAt
        self.autoResumeTime = autoResumeTime
        self.isTestPurchase = isTestPurchase
        self.obfuscatedAccountId = obfuscatedAccountId
        self.obfuscatedProfileId = obfuscatedProfileId
        self.externalAccountId = externalAccountId
        self.regionCode = regionCode
    }

    /// License testers' purchases are the sandbox; everything else production. Play has no
    /// other environment, and the two never mix in one `CustomerInfo`.
    public var environment: AppStoreEnvironment { isTestPurchase ? .sandbox : .production }
}
