import AppStoreModels

/// The business events the engine reports.
/// - Note: Immutable value; `Sendable`.
public enum LifecycleEventType: String, Sendable, Hashable, Codable, CaseIterable {
    case initialPurchase = "INITIAL_PURCHASE"
    case trialStarted = "TRIAL_STARTED"
    case trialConverted = "TRIAL_CONVERTED"
    case trialCancelled = "TRIAL_CANCELLED"
    case renewal = "RENEWAL"
    /// Auto-renew turned off.
    case cancellation = "CANCELLATION"
    /// Google Play: the customer paused the subscription (access ends with the paid period).
    case subscriptionPaused = "SUBSCRIPTION_PAUSED"
    /// Auto-renew turned back on.
    case uncancellation = "UNCANCELLATION"
    case billingIssue = "BILLING_ISSUE"
    case gracePeriodStarted = "GRACE_PERIOD_STARTED"
    case billingRecovered = "BILLING_RECOVERED"
    /// Access to a subscription ended (at the expiry, or at the end of a billing grace period).
    case expiration = "EXPIRATION"
    /// The reason of an `EXPIRATION` already reported changed when a later fact told it (an
    /// EXPIRED notification after a time-driven expiry). Not a change of access.
    case expirationReasonUpdated = "EXPIRATION_REASON_UPDATED"
    case refund = "REFUND"
    case refundReversed = "REFUND_REVERSED"
    case familySharingRevoked = "FAMILY_SHARING_REVOKED"
    case productChange = "PRODUCT_CHANGE"
    case offerRedeemed = "OFFER_REDEEMED"
    case priceIncreaseConsent = "PRICE_INCREASE_CONSENT"
    case subscriptionExtended = "SUBSCRIPTION_EXTENDED"
    case nonRenewingPurchase = "NON_RENEWING_PURCHASE"
    case nonConsumablePurchase = "NON_CONSUMABLE_PURCHASE"
    case consumablePurchase = "CONSUMABLE_PURCHASE"
    /// A purchase moved to this customer from another app user id (the app's transfer policy).
    /// Never derived from facts: the server emits it when identity changes hands.
    case transfer = "TRANSFER"
    /// An event reported earlier that the facts, once a late one arrived, no longer imply
    /// (`retractedEventId` names it). Never derived from facts: the store emits it when it marks
    /// the event retracted.
    case eventRetracted = "EVENT_RETRACTED"

    /// Orders events of the same instant the way they happen (a billing issue before its grace
    /// period and before a recovery that keeps the renewal date, a recovery before the renewal it
    /// paid for, a purchase before the offer it redeemed).
    var rank: Int { Self.sameInstantOrder.firstIndex(of: self)! }

    private static let sameInstantOrder: [LifecycleEventType] = [
        .billingIssue, .gracePeriodStarted, .billingRecovered, .initialPurchase, .trialStarted, .trialConverted,
        .renewal, .productChange, .offerRedeemed, .subscriptionExtended, .priceIncreaseConsent, .cancellation,
        .subscriptionPaused, .trialCancelled, .uncancellation, .expiration, .expirationReasonUpdated, .refund,
        .refundReversed,
        .familySharingRevoked, .nonRenewingPurchase, .nonConsumablePurchase, .consumablePurchase, .transfer,
        .eventRetracted,
    ]
}

/// One business event, derived from the facts that caused it.
///
/// `id` is built from the change it reports (event type + transaction or renewal period + the
/// instant of the change where a period can see several), never from arrival time or a count
/// of earlier changes, so any arrival order of the same facts yields the same ids and the store
/// can treat them as unique keys. `occurredAt` is Apple's date for the cause.
/// - Note: Immutable value; `Sendable`.
public struct LifecycleEvent: Sendable, Hashable, Codable {
    public var id: String
    public var type: LifecycleEventType
    public var customerId: String
    public var environment: AppStoreEnvironment
    public var occurredAt: Timestamp
    public var productId: String
    public var entitlementIds: [String]
    public var transactionId: String?
    public var originalTransactionId: String?
    public var periodType: PeriodType?
    /// Signed: refunds are negative.
    public var price: Money?
    public var commissionPercent: Int?
    /// Signed: refunds are negative.
    public var proceeds: Money?
    public var expiresDate: Timestamp?
    public var expirationReason: ExpirationReason?
    public var refundReason: RefundReason?
    public var productChange: ProductChange?
    public var offerIdentifier: String?
    public var priceIncreaseConsent: PriceIncreaseConsent?
    public var gracePeriodExpiresDate: Timestamp?
    /// A `RENEWAL` that starts a new run after the subscription had lapsed.
    public var isResubscription: Bool
    /// `true` on a `RENEWAL` that follows a gap in the facts (a period between it and the previous
    /// one was never received): access had ended with the last known period, and nothing is said
    /// about billing. Absent otherwise.
    public var afterFactGap: Bool?
    /// On an `EVENT_RETRACTED`: the id of the event retracted. Absent otherwise.
    public var retractedEventId: String?
    /// For support staff.
    public var summary: String
    /// Absent for the App Store, `play_store` for Google Play (`Marketplace`).
    public var store: Marketplace?

    public init(
        id: String, type: LifecycleEventType, customerId: String, environment: AppStoreEnvironment,
        occurredAt: Timestamp, productId: String, entitlementIds: [String], transactionId: String? = nil,
        originalTransactionId: String? = nil, periodType: PeriodType? = nil, price: Money? = nil,
        commissionPercent: Int? = nil, proceeds: Money? = nil, expiresDate: Timestamp? = nil,
        expirationReason: ExpirationReason? = nil, refundReason: RefundReason? = nil,
        productChange: ProductChange? = nil, offerIdentifier: String? = nil,
        priceIncreaseConsent: PriceIncreaseConsent? = nil, gracePeriodExpiresDate: Timestamp? = nil,
        isResubscription: Bool = false, summary: String
    ) {
        self.id = id
        self.type = type
        self.customerId = customerId
        self.environment = environment
        self.occurredAt = occurredAt
        self.productId = productId
        self.entitlementIds = entitlementIds
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.periodType = periodType
        self.price = price
        self.commissionPercent = commissionPercent
        self.proceeds = proceeds
        self.expiresDate = expiresDate
        self.expirationReason = expirationReason
        self.refundReason = refundReason
        self.productChange = productChange
        self.offerIdentifier = offerIdentifier
        self.priceIncreaseConsent = priceIncreaseConsent
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.isResubscription = isResubscription
        self.summary = summary
    }

    /// The correcting event for `event`, reported earlier and no longer implied by the facts
    /// (`EntitlementEvaluation.retractedEventIds`), dated `instant` (when the store retracted it).
    /// Its id names the retracted event and that instant, so a retraction is reported once.
    public static func retraction(of event: LifecycleEvent, at instant: Timestamp) -> LifecycleEvent {
        var retraction = LifecycleEvent(
            id: "\(LifecycleEventType.eventRetracted.rawValue)/\(event.id)/\(instant.millisecondsSince1970)",
            type: .eventRetracted, customerId: event.customerId, environment: event.environment, occurredAt: instant,
            productId: event.productId, entitlementIds: event.entitlementIds, transactionId: event.transactionId,
            originalTransactionId: event.originalTransactionId,
            summary:
                "\(event.type.rawValue) of \(event.occurredAt.humanReadable) retracted: later facts show it did not happen"
        )
        retraction.retractedEventId = event.id
        retraction.store = event.store
        return retraction
    }

    /// Chronological, then by `rank`, then by id: a total order, so event lists compare exactly.
    static func chronological(_ lhs: LifecycleEvent, _ rhs: LifecycleEvent) -> Bool {
        if lhs.occurredAt != rhs.occurredAt { return lhs.occurredAt < rhs.occurredAt }
        if lhs.type.rank != rhs.type.rank { return lhs.type.rank < rhs.type.rank }
        return lhs.id < rhs.id
    }
}
