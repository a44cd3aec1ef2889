import AppStoreModels

/// Everything one customer may use now, in one environment, and why; derived from facts.
///
/// Stored as JSON by the server and handed back as `previous` to the next evaluation.
/// Collections are dictionaries or sorted arrays so that equal facts give equal values.
/// - Note: Immutable value; `Sendable`.
public struct CustomerInfo: Sendable, Hashable, Codable {
    public var customerId: String
    /// Sandbox and production facts never mix: one `CustomerInfo` per environment.
    public var environment: AppStoreEnvironment
    /// The instant this state was evaluated at.
    public var evaluatedAt: Timestamp
    public var entitlements: [String: EntitlementInfo]
    /// Auto-renewable subscriptions by product id.
    public var subscriptions: [String: SubscriptionInfo]
    /// Non-renewing subscriptions, non-consumables and consumables, by purchase date.
    public var nonSubscriptionPurchases: [NonSubscriptionPurchase]
    /// By subscription group.
    public var introOfferEligibility: [String: IntroOfferEligibility]
    /// Per transaction, by purchase date.
    public var revenue: [TransactionRevenue]
    /// The ids of every lifecycle event these facts imply, sorted, so that the next evaluation
    /// reports only the new ones.
    public var eventIds: [String]
    /// Facts that were set aside and why (other environment, unknown product, …), sorted.
    public var notes: [String]

    public init(
        customerId: String, environment: AppStoreEnvironment, evaluatedAt: Timestamp,
        entitlements: [String: EntitlementInfo] = [:], subscriptions: [String: SubscriptionInfo] = [:],
        nonSubscriptionPurchases: [NonSubscriptionPurchase] = [],
        introOfferEligibility: [String: IntroOfferEligibility] = [:],
        revenue: [TransactionRevenue] = [], eventIds: [String] = [], notes: [String] = []
    ) {
        self.customerId = customerId
        self.environment = environment
        self.evaluatedAt = evaluatedAt
        self.entitlements = entitlements
        self.subscriptions = subscriptions
        self.nonSubscriptionPurchases = nonSubscriptionPurchases
        self.introOfferEligibility = introOfferEligibility
        self.revenue = revenue
        self.eventIds = eventIds
        self.notes = notes
    }

    /// Ids of the entitlements active now, sorted.
    public var activeEntitlementIds: [String] {
        entitlements.values.filter(\.isActive).map(\.entitlementId).sorted()
    }
}
