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

    public init() {}

    /// The fields in `columns` order.
    public var values: [Int64] {
        [
            transactions, gross, proceeds, refunded, refundedProceeds, refunds, refundsDeveloperIssue,
            refundedOnDate, refundedOnDateDeveloperIssue, familyRevocations, activePaidDelta, activeTrialDelta,
            activeFamilyDelta, mrrGrossDelta, mrrProceedsDelta, newCustomers, trialsStarted, trialsConverted,
            trialsPending, trialsAbandoned,
        ]
    }

    /// From values in `columns` order; `nil` when the count differs.
    public init?(values: [Int64]) {
        guard values.count == Self.columns.count else { return nil }
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
    }

    public var isZero: Bool { values.allSatisfy { $0 == 0 } }

    public static func + (lhs: AnalyticsMeasures, rhs: AnalyticsMeasures) -> AnalyticsMeasures {
        AnalyticsMeasures(values: zip(lhs.values, rhs.values).map { $0 + $1 })!
    }

    public static func - (lhs: AnalyticsMeasures, rhs: AnalyticsMeasures) -> AnalyticsMeasures {
        AnalyticsMeasures(values: zip(lhs.values, rhs.values).map { $0 - $1 })!
    }
}

/// The key of one daily aggregate row (per app and environment besides): day, product,
/// subscription group, storefront and currency (empty when unknown or none).
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsDailyKey: Sendable, Hashable, Comparable, Codable {
    public var day: CalendarDay
    public var productId: String
    public var subscriptionGroup: String
    public var storefront: String
    public var currency: String

    public init(day: CalendarDay, productId: String, subscriptionGroup: String, storefront: String, currency: String) {
        self.day = day
        self.productId = productId
        self.subscriptionGroup = subscriptionGroup
        self.storefront = storefront
        self.currency = currency
    }

    /// Day first, then the other fields: the order rows are written in, so concurrent writers
    /// lock shared rows in one order and cannot deadlock.
    public static func < (lhs: AnalyticsDailyKey, rhs: AnalyticsDailyKey) -> Bool {
        (lhs.day, lhs.productId, lhs.subscriptionGroup, lhs.storefront, lhs.currency)
            < (rhs.day, rhs.productId, rhs.subscriptionGroup, rhs.storefront, rhs.currency)
    }
}
