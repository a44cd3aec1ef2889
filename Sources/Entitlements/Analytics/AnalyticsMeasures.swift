/// The figures one daily aggregate row sums, all integers so sums and differences are exact.
///
/// Money is milliunits of the row's currency. Fields named `…Delta` are changes on the row's
/// day (+1 when a period becomes active at that midnight, −1 when it stops), so the value at a
/// midnight is the sum of the deltas up to it; every other field counts what happened on the
/// row's day. Stored as one column per field (`columns`), in this order.
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsMeasures: Sendable, Hashable, Codable {
    public static let columns = [
        "transactions", "gross", "proceeds", "refunded", "refunded_proceeds",
        "refunds", "refunds_developer_issue", "refunded_on_date", "refunded_on_date_developer_issue",
        "family_revocations",
        "active_paid_delta", "active_trial_delta", "active_family_delta", "mrr_gross_delta", "mrr_proceeds_delta",
        "new_customers", "trials_started", "trials_converted", "trials_pending", "trials_abandoned",
        // 0015_analytics_cohorts
        "paid_runs_active_delta", "mrr_new", "mrr_expansion", "mrr_contraction", "mrr_churned", "mrr_reactivation",
        "refund_reversals", "consumption_requests", "consumption_requests_granted", "consumption_requests_declined",
        // 0016_analytics_store
        "refunds_partial",
    ]

    /// By purchase day: paid transactions and their money, and what refunds took back of them.
    public var transactions: Int64 = 0
    public var gross: Int64 = 0
    public var proceeds: Int64 = 0
    public var refunded: Int64 = 0
    public var refundedProceeds: Int64 = 0
    /// By refund day.
    public var refunds: Int64 = 0
    public var refundsDeveloperIssue: Int64 = 0
    public var refundedOnDate: Int64 = 0
    public var refundedOnDateDeveloperIssue: Int64 = 0
    /// By revocation day.
    public var familyRevocations: Int64 = 0
    public var activePaidDelta: Int64 = 0
    public var activeTrialDelta: Int64 = 0
    public var activeFamilyDelta: Int64 = 0
    public var mrrGrossDelta: Int64 = 0
    public var mrrProceedsDelta: Int64 = 0
    /// On the customer's first purchase day.
    public var newCustomers: Int64 = 0
    /// By the trial's start day, with its outcome when computed.
    public var trialsStarted: Int64 = 0
    public var trialsConverted: Int64 = 0
    public var trialsPending: Int64 = 0
    public var trialsAbandoned: Int64 = 0
    /// Uninterrupted paid runs of a subscription (`AnalyticsPeriod`), +1 on the first midnight
    /// of a run, −1 on the first after it: the paid subscriptions a churn figure starts from.
    public var paidRunsActiveDelta: Int64 = 0
    /// MRR movement (gross), on the day the change happened (`MRRMovement`): what moved the
    /// MRR from the midnight starting the day to the one ending it.
    public var mrrNew: Int64 = 0
    public var mrrExpansion: Int64 = 0
    public var mrrContraction: Int64 = 0
    public var mrrChurned: Int64 = 0
    public var mrrReactivation: Int64 = 0
    /// By the notification's day: `REFUND_REVERSED`, and `CONSUMPTION_REQUEST` by Apple's
    /// later decision (granted: a refund followed; declined: `REFUND_DECLINED`; else none yet).
    public var refundReversals: Int64 = 0
    public var consumptionRequests: Int64 = 0
    public var consumptionRequestsGranted: Int64 = 0
    public var consumptionRequestsDeclined: Int64 = 0
    /// By refund day: the refunds that took back part of a purchase (Apple's prorated refunds,
    /// Google Play's quantity-based partial refunds); `refunds` counts them too.
    public var refundsPartial: Int64 = 0

    public init() {}

    /// The fields in `columns` order.
    public var values: [Int64] {
        [
            transactions, gross, proceeds, refunded, refundedProceeds, refunds, refundsDeveloperIssue,
            refundedOnDate, refundedOnDateDeveloperIssue, familyRevocations, activePaidDelta, activeTrialDelta,
            activeFamilyDelta, mrrGrossDelta, mrrProceedsDelta, newCustomers, trialsStarted, trialsConverted,
            trialsPending, trialsAbandoned, paidRunsActiveDelta, mrrNew, mrrExpansion, mrrContraction, mrrChurned,
            mrrReactivation, refundReversals, consumptionRequests, consumptionRequestsGranted,
            consumptionRequestsDeclined, refundsPartial,
        ]
    }

    /// The number of fields before migration 0015 added the churn, MRR movement and refund
    /// request ones: contributions stored before it have this many values.
    public static let columnsBefore0015 = 20
    /// The number of fields before migration 0016 added `refundsPartial`.
    public static let columnsBefore0016 = 30

    /// From values in `columns` order; `nil` when the count is neither that nor
    /// `columnsBefore0015` (an older stored contribution: its newer fields read as zero, as the
    /// daily rows' new columns do, until a rebuild computes them).
    public init?(values stored: [Int64]) {
        guard [Self.columns.count, Self.columnsBefore0015, Self.columnsBefore0016].contains(stored.count) else {
            return nil
        }
        let values = stored + Array(repeating: 0, count: Self.columns.count - stored.count)
        transactions = values[0]
        gross = values[1]
        proceeds = values[2]
        refunded = values[3]
        refundedProceeds = values[4]
        refunds = values[5]
        refundsDeveloperIssue = values[6]
        refundedOnDate = values[7]
        refundedOnDateDeveloperIssue = values[8]
        familyRevocations = values[9]
        activePaidDelta = values[10]
        activeTrialDelta = values[11]
        activeFamilyDelta = values[12]
        mrrGrossDelta = values[13]
        mrrProceedsDelta = values[14]
        newCustomers = values[15]
        trialsStarted = values[16]
        trialsConverted = values[17]
        trialsPending = values[18]
        trialsAbandoned = values[19]
        paidRunsActiveDelta = values[20]
        mrrNew = values[21]
        mrrExpansion = values[22]
        mrrContraction = values[23]
        mrrChurned = values[24]
        mrrReactivation = values[25]
        refundReversals = values[26]
        consumptionRequests = values[27]
        consumptionRequestsGranted = values[28]
        consumptionRequestsDeclined = values[29]
        refundsPartial = values[30]
    }

    /// Member by member: `values` would build an array for each entry asked.
    public var isZero: Bool { self == AnalyticsMeasures() }

    public static func + (lhs: AnalyticsMeasures, rhs: AnalyticsMeasures) -> AnalyticsMeasures {
        AnalyticsMeasures(values: zip(lhs.values, rhs.values).map { $0 + $1 })!
    }

    public static func - (lhs: AnalyticsMeasures, rhs: AnalyticsMeasures) -> AnalyticsMeasures {
        AnalyticsMeasures(values: zip(lhs.values, rhs.values).map { $0 - $1 })!
    }
}

/// The key of one daily aggregate row (per app and environment besides): day, product,
/// subscription group, storefront and currency (empty when unknown or none), and the store
/// (migration 0016; absent in contributions stored before it: the App Store).
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsDailyKey: Sendable, Hashable, Comparable, Codable {
    public var day: CalendarDay
    public var productId: String
    public var subscriptionGroup: String
    public var storefront: String
    public var currency: String
    public var store: AnalyticsStore

    public init(
        day: CalendarDay, productId: String, subscriptionGroup: String, storefront: String, currency: String,
        store: AnalyticsStore = .appStore
    ) {
        self.day = day
        self.productId = productId
        self.subscriptionGroup = subscriptionGroup
        self.storefront = storefront
        self.currency = currency
        self.store = store
    }

    private enum CodingKeys: String, CodingKey { case day, productId, subscriptionGroup, storefront, currency, store }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        day = try container.decode(CalendarDay.self, forKey: .day)
        productId = try container.decode(String.self, forKey: .productId)
        subscriptionGroup = try container.decode(String.self, forKey: .subscriptionGroup)
        storefront = try container.decode(String.self, forKey: .storefront)
        currency = try container.decode(String.self, forKey: .currency)
        store = try container.decodeIfPresent(AnalyticsStore.self, forKey: .store) ?? .appStore
    }

    /// App Store keys are encoded without `store`, as before 0016, so a stored contribution
    /// of an App Store customer is unchanged by the migration (no rewrite, no spurious change
    /// reported by a rebuild).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(day, forKey: .day)
        try container.encode(productId, forKey: .productId)
        try container.encode(subscriptionGroup, forKey: .subscriptionGroup)
        try container.encode(storefront, forKey: .storefront)
        try container.encode(currency, forKey: .currency)
        if store != .appStore { try container.encode(store, forKey: .store) }
    }

    /// The day and product only: the other fields rarely differ between keys of one day and
    /// product, and a re-evaluation hashes a key for every figure it adds up (equality still
    /// compares every field).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(day)
        hasher.combine(productId)
    }

    /// Day first, then the other fields: the order rows are written in, so concurrent writers
    /// lock shared rows in one order and cannot deadlock. Field by field rather than as tuples:
    /// a contribution's keys are sorted at every re-evaluation, and the tuples retained four
    /// strings a side per comparison.
    public static func < (lhs: AnalyticsDailyKey, rhs: AnalyticsDailyKey) -> Bool {
        if lhs.day != rhs.day { return lhs.day < rhs.day }
        if lhs.productId != rhs.productId { return lhs.productId < rhs.productId }
        if lhs.subscriptionGroup != rhs.subscriptionGroup { return lhs.subscriptionGroup < rhs.subscriptionGroup }
        if lhs.storefront != rhs.storefront { return lhs.storefront < rhs.storefront }
        if lhs.currency != rhs.currency { return lhs.currency < rhs.currency }
        return lhs.store < rhs.store
    }
}
