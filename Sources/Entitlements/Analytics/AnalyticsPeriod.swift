import AppStoreModels

/// One active subscription period of a customer as analytics keeps it, to the millisecond: what
/// the daily rows cannot answer. Active counts and MRR at an instant that is not a midnight
/// (`now` inside the current bucket) read these; churn reads the periods that end a paid run.
///
/// A paid *run* is an uninterrupted stretch of paid service of one subscription (the customer's
/// subscription group, or the product when it has none): periods that touch or overlap merge.
/// The period with the run's latest end carries the run (`run`).
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsPeriod: Sendable, Hashable, Codable {
    /// What a run-ending period says about its run.
    public struct Run: Sendable, Hashable, Codable {
        public var start: Timestamp
        /// The start of the subscription's next paid run (`nil`: none yet).
        public var nextStart: Timestamp?
        /// Why the run ended (`nil`: not known or still running; reported as other).
        public var reason: ChurnReason?

        public init(start: Timestamp, nextStart: Timestamp?, reason: ChurnReason?) {
            self.start = start
            self.nextStart = nextStart
            self.reason = reason
        }
    }

    public var transactionId: String
    /// The subscription group, or the product id when the product has none.
    public var subscription: String
    public var productId: String
    public var subscriptionGroup: String
    public var storefront: String
    public var currency: String
    public var activity: SubscriptionActivity
    /// Active over `[start, end)`.
    public var start: Timestamp
    public var end: Timestamp
    /// The price normalised to a month, gross and after commission (0 unless paid).
    public var mrrGross: Int64
    public var mrrProceeds: Int64
    /// Set on the paid period that ends a run.
    public var run: Run?
    /// Which store sold the period (migration 0016).
    public var store: AnalyticsStore = .appStore

    public init(
        transactionId: String, subscription: String, productId: String, subscriptionGroup: String,
        storefront: String, currency: String, activity: SubscriptionActivity, start: Timestamp, end: Timestamp,
        mrrGross: Int64, mrrProceeds: Int64, run: Run?, store: AnalyticsStore = .appStore
    ) {
        self.transactionId = transactionId
        self.subscription = subscription
        self.productId = productId
        self.subscriptionGroup = subscriptionGroup
        self.storefront = storefront
        self.currency = currency
        self.activity = activity
        self.start = start
        self.end = end
        self.mrrGross = mrrGross
        self.mrrProceeds = mrrProceeds
        self.run = run
        self.store = store
    }

    /// The daily-row key of this period.
    public func key(day: CalendarDay) -> AnalyticsDailyKey {
        AnalyticsDailyKey(
            day: day, productId: productId, subscriptionGroup: subscriptionGroup, storefront: storefront,
            currency: currency, store: store)
    }
}
