import AppStoreModels
import Entitlements

/// An app's analytics settings with the version its `ETag` names (0: never saved).
/// - Note: Immutable value; `Sendable`.
public struct StoredAnalyticsSettings: Sendable, Hashable {
    public var settings: AnalyticsSettings
    public var version: Int64

    public init(settings: AnalyticsSettings, version: Int64) {
        self.settings = settings
        self.version = version
    }
}

/// The filters of an analytics query; `nil` matches everything.
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsFilter: Sendable, Hashable {
    public var productId: String?
    public var storefront: String?
    public var subscriptionGroup: String?
    /// One store's figures; `nil`: both stores combined.
    public var store: AnalyticsStore?

    public init(
        productId: String? = nil, storefront: String? = nil, subscriptionGroup: String? = nil,
        store: AnalyticsStore? = nil
    ) {
        self.productId = productId
        self.storefront = storefront
        self.subscriptionGroup = subscriptionGroup
        self.store = store
    }
}

/// Daily aggregates summed over products, storefronts and groups (those matching a filter):
/// one day and currency.
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsDailyTotal: Sendable, Hashable {
    public var day: CalendarDay
    public var currency: String
    public var measures: AnalyticsMeasures

    public init(day: CalendarDay, currency: String, measures: AnalyticsMeasures) {
        self.day = day
        self.currency = currency
        self.measures = measures
    }
}

/// One stored daily aggregate row, whole (for comparisons such as the rebuild's).
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsDailyRow: Sendable, Hashable {
    public var environment: String
    public var key: AnalyticsDailyKey
    public var measures: AnalyticsMeasures

    public init(environment: String, key: AnalyticsDailyKey, measures: AnalyticsMeasures) {
        self.environment = environment
        self.key = key
        self.measures = measures
    }
}

/// Subscription periods active at one instant, per activity and currency, with their MRR
/// (paid only).
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsActiveTotal: Sendable, Hashable {
    public var activity: SubscriptionActivity
    public var currency: String
    public var count: Int64
    public var mrrGross: Int64
    public var mrrProceeds: Int64

    public init(activity: SubscriptionActivity, currency: String, count: Int64, mrrGross: Int64, mrrProceeds: Int64) {
        self.activity = activity
        self.currency = currency
        self.count = count
        self.mrrGross = mrrGross
        self.mrrProceeds = mrrProceeds
    }
}

/// One window of churn: the paid runs active at `from` whose paid service ended in
/// `(from, through]`.
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsChurnWindow: Sendable, Hashable {
    public var from: Timestamp
    public var through: Timestamp

    public init(from: Timestamp, through: Timestamp) {
        self.from = from
        self.through = through
    }
}

/// The paid runs of one `AnalyticsChurnWindow` that ended in it: all of them, those that paid
/// again in the same group by its end, and the others by reason (`nil`: not known).
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsChurnEnds: Sendable, Hashable {
    public var expired: Int64 = 0
    public var resubscribed: Int64 = 0
    public var byReason: [ChurnReason?: Int64] = [:]
    public var churned: Int64 { expired - resubscribed }

    public init(expired: Int64 = 0, resubscribed: Int64 = 0, byReason: [ChurnReason?: Int64] = [:]) {
        self.expired = expired
        self.resubscribed = resubscribed
        self.byReason = byReason
    }
}
