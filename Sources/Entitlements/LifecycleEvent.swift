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
    /// The stored members, shared by copies (`SharedMembers`): an evaluation copies every event
    /// several times over (built, deduplicated, sorted, filtered into the new ones), and inline
    /// each copy moved about 300 bytes and retained a dozen references.
    struct Members: Sendable, Hashable, Codable {
        var id: String
        var type: LifecycleEventType
        var customerId: String
        var environment: AppStoreEnvironment
        var occurredAt: Timestamp
        var productId: String
        var entitlementIds: [String]
        var transactionId: String?
        var originalTransactionId: String?
        var periodType: PeriodType?
        var price: Money?
        var commissionPercent: Int?
        var proceeds: Money?
        var expiresDate: Timestamp?
        var expirationReason: ExpirationReason?
        var refundReason: RefundReason?
        var productChange: ProductChange?
        var offerIdentifier: String?
        var priceIncreaseConsent: PriceIncreaseConsent?
        var gracePeriodExpiresDate: Timestamp?
        var isResubscription: Bool
        var afterFactGap: Bool?
        var retractedEventId: String?
        var summary: String
        var store: Marketplace?
    }

    private var members: SharedMembers<Members>

    public var id: String {
        get { members.value.id }
        set { members.value.id = newValue }
    }
    public var type: LifecycleEventType {
        get { members.value.type }
        set { members.value.type = newValue }
    }
    public var customerId: String {
        get { members.value.customerId }
        set { members.value.customerId = newValue }
    }
    public var environment: AppStoreEnvironment {
        get { members.value.environment }
        set { members.value.environment = newValue }
    }
    public var occurredAt: Timestamp {
        get { members.value.occurredAt }
        set { members.value.occurredAt = newValue }
    }
    public var productId: String {
        get { members.value.productId }
        set { members.value.productId = newValue }
    }
    public var entitlementIds: [String] {
        get { members.value.entitlementIds }
        set { members.value.entitlementIds = newValue }
    }
    public var transactionId: String? {
        get { members.value.transactionId }
        set { members.value.transactionId = newValue }
    }
    public var originalTransactionId: String? {
        get { members.value.originalTransactionId }
        set { members.value.originalTransactionId = newValue }
    }
    public var periodType: PeriodType? {
        get { members.value.periodType }
        set { members.value.periodType = newValue }
    }
    /// Signed: refunds are negative.
    public var price: Money? {
        get { members.value.price }
        set { members.value.price = newValue }
    }
    public var commissionPercent: Int? {
        get { members.value.commissionPercent }
        set { members.value.commissionPercent = newValue }
    }
    /// Signed: refunds are negative.
    public var proceeds: Money? {
        get { members.value.proceeds }
        set { members.value.proceeds = newValue }
    }
    public var expiresDate: Timestamp? {
        get { members.value.expiresDate }
        set { members.value.expiresDate = newValue }
    }
    public var expirationReason: ExpirationReason? {
        get { members.value.expirationReason }
        set { members.value.expirationReason = newValue }
    }
    public var refundReason: RefundReason? {
        get { members.value.refundReason }
        set { members.value.refundReason = newValue }
    }
    public var productChange: ProductChange? {
        get { members.value.productChange }
        set { members.value.productChange = newValue }
    }
    public var offerIdentifier: String? {
        get { members.value.offerIdentifier }
        set { members.value.offerIdentifier = newValue }
    }
    public var priceIncreaseConsent: PriceIncreaseConsent? {
        get { members.value.priceIncreaseConsent }
        set { members.value.priceIncreaseConsent = newValue }
    }
    public var gracePeriodExpiresDate: Timestamp? {
        get { members.value.gracePeriodExpiresDate }
        set { members.value.gracePeriodExpiresDate = newValue }
    }
    /// A `RENEWAL` that starts a new run after the subscription had lapsed.
    public var isResubscription: Bool {
        get { members.value.isResubscription }
        set { members.value.isResubscription = newValue }
    }
    /// `true` on a `RENEWAL` that follows a gap in the facts (a period between it and the previous
    /// one was never received): access had ended with the last known period, and nothing is said
    /// about billing. Absent otherwise.
    public var afterFactGap: Bool? {
        get { members.value.afterFactGap }
        set { members.value.afterFactGap = newValue }
    }
    /// On an `EVENT_RETRACTED`: the id of the event retracted. Absent otherwise.
    public var retractedEventId: String? {
        get { members.value.retractedEventId }
        set { members.value.retractedEventId = newValue }
    }
    /// For support staff.
    public var summary: String {
        get { members.value.summary }
        set { members.value.summary = newValue }
    }
    /// Absent for the App Store, `play_store` for Google Play (`Marketplace`).
    public var store: Marketplace? {
        get { members.value.store }
        set { members.value.store = newValue }
    }

    /// The stored members (tests: a hand-written encoding covers each).
    var storedMembers: Members { members.value }

    /// The members' coding, in the same container: the stored JSON is what it was when they
    /// were stored inline. (Equality and hashing are synthesized: the members'.)
    public init(from decoder: any Decoder) throws {
        members = try SharedMembers(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try members.encode(to: encoder)
    }

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
        members = SharedMembers(
            Members(
                id: id, type: type, customerId: customerId, environment: environment, occurredAt: occurredAt,
                productId: productId, entitlementIds: entitlementIds, transactionId: transactionId,
                originalTransactionId: originalTransactionId, periodType: periodType, price: price,
                commissionPercent: commissionPercent, proceeds: proceeds, expiresDate: expiresDate,
                expirationReason: expirationReason, refundReason: refundReason, productChange: productChange,
                offerIdentifier: offerIdentifier, priceIncreaseConsent: priceIncreaseConsent,
                gracePeriodExpiresDate: gracePeriodExpiresDate, isResubscription: isResubscription, summary: summary))
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
