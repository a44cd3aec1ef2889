import AppStoreModels
import Entitlements

/// Retention rows summed over storefronts and groups (those matching a filter): how many
/// subscriptions of a cohort month and product have paid `paidRenewals` renewals.
/// - Note: Immutable value; `Sendable`.
public struct RetentionCohortTotal: Sendable, Hashable {
    public var cohortMonth: CalendarDay
    public var productId: String
    public var paidRenewals: Int64
    public var subscriptions: Int64

    public init(cohortMonth: CalendarDay, productId: String, paidRenewals: Int64, subscriptions: Int64) {
        self.cohortMonth = cohortMonth
        self.productId = productId
        self.paidRenewals = paidRenewals
        self.subscriptions = subscriptions
    }
}

/// LTV rows summed over the first purchase's product, group and storefront (those matching a
/// filter), per cohort month, currency and span of purchase days (`day`: the span's last day
/// with rows; a single purchase day when spans are days).
/// - Note: Immutable value; `Sendable`.
public struct LTVCohortTotal: Sendable, Hashable {
    public var cohortMonth: CalendarDay
    public var day: CalendarDay
    public var currency: String
    public var measures: LTVMeasures

    public init(cohortMonth: CalendarDay, day: CalendarDay, currency: String, measures: LTVMeasures) {
        self.cohortMonth = cohortMonth
        self.day = day
        self.currency = currency
        self.measures = measures
    }
}

/// Every non-zero retention and LTV row of an app, by environment, in key order: what a
/// rebuild and the tests compare.
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsCohortRows: Sendable, Hashable {
    public struct Retention: Sendable, Hashable {
        public var environment: String
        public var key: RetentionCohortKey
        public var subscriptions: Int64

        public init(environment: String, key: RetentionCohortKey, subscriptions: Int64) {
            self.environment = environment
            self.key = key
            self.subscriptions = subscriptions
        }
    }

    public struct LTV: Sendable, Hashable {
        public var environment: String
        public var key: LTVCohortKey
        public var measures: LTVMeasures

        public init(environment: String, key: LTVCohortKey, measures: LTVMeasures) {
            self.environment = environment
            self.key = key
            self.measures = measures
        }
    }

    public var retention: [Retention]
    public var ltv: [LTV]

    public init(retention: [Retention], ltv: [LTV]) {
        self.retention = retention
        self.ltv = ltv
    }

    public var count: Int { retention.count + ltv.count }
}
