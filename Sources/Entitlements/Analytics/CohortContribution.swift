import AppStoreModels

/// One retention cohort row: the subscriptions whose first full-price payment fell in
/// `cohortMonth` (its first day) on this product, group and storefront, and that have paid
/// `paidRenewals` renewals since.
/// - Note: Immutable value; `Sendable`.
public struct RetentionCohortKey: Sendable, Hashable, Comparable, Codable {
    public var cohortMonth: CalendarDay
    public var productId: String
    public var subscriptionGroup: String
    public var storefront: String
    public var paidRenewals: Int64

    public init(
        cohortMonth: CalendarDay, productId: String, subscriptionGroup: String, storefront: String, paidRenewals: Int64
    ) {
        self.cohortMonth = cohortMonth
        self.productId = productId
        self.subscriptionGroup = subscriptionGroup
        self.storefront = storefront
        self.paidRenewals = paidRenewals
    }

    /// The order rows are written in, so concurrent writers lock shared rows in one order.
    public static func < (lhs: RetentionCohortKey, rhs: RetentionCohortKey) -> Bool {
        if lhs.cohortMonth != rhs.cohortMonth { return lhs.cohortMonth < rhs.cohortMonth }
        if lhs.productId != rhs.productId { return lhs.productId < rhs.productId }
        if lhs.subscriptionGroup != rhs.subscriptionGroup { return lhs.subscriptionGroup < rhs.subscriptionGroup }
        if lhs.storefront != rhs.storefront { return lhs.storefront < rhs.storefront }
        return lhs.paidRenewals < rhs.paidRenewals
    }
}

/// One realized-LTV row: the customers first seen in `cohortMonth` through a first purchase of
/// this product, group and storefront, and their paid transactions purchased on `day` in
/// `currency`.
/// - Note: Immutable value; `Sendable`.
public struct LTVCohortKey: Sendable, Hashable, Comparable, Codable {
    public var cohortMonth: CalendarDay
    public var productId: String
    public var subscriptionGroup: String
    public var storefront: String
    /// The purchase day of the money (the day its conversion to the reporting currency uses).
    public var day: CalendarDay
    public var currency: String

    public init(
        cohortMonth: CalendarDay, productId: String, subscriptionGroup: String, storefront: String, day: CalendarDay,
        currency: String
    ) {
        self.cohortMonth = cohortMonth
        self.productId = productId
        self.subscriptionGroup = subscriptionGroup
        self.storefront = storefront
        self.day = day
        self.currency = currency
    }

    public static func < (lhs: LTVCohortKey, rhs: LTVCohortKey) -> Bool {
        if lhs.cohortMonth != rhs.cohortMonth { return lhs.cohortMonth < rhs.cohortMonth }
        if lhs.productId != rhs.productId { return lhs.productId < rhs.productId }
        if lhs.subscriptionGroup != rhs.subscriptionGroup { return lhs.subscriptionGroup < rhs.subscriptionGroup }
        if lhs.storefront != rhs.storefront { return lhs.storefront < rhs.storefront }
        if lhs.day != rhs.day { return lhs.day < rhs.day }
        return lhs.currency < rhs.currency
    }
}

/// What an `LTVCohortKey` row sums: customers (counted once, on the row of their first
/// purchase) and net revenue (gross minus what refunds took back) of the transactions purchased
/// within 7, 30, 90 and 365 days of each customer's first purchase, in milliunits.
/// - Note: Immutable value; `Sendable`.
public struct LTVMeasures: Sendable, Hashable, Codable {
    /// The horizons in days, in the order of `values`' money fields.
    public static let horizons: [Int64] = [7, 30, 90, 365]

    public var customers: Int64 = 0
    public var d7: Int64 = 0
    public var d30: Int64 = 0
    public var d90: Int64 = 0
    public var d365: Int64 = 0

    public init(customers: Int64 = 0, d7: Int64 = 0, d30: Int64 = 0, d90: Int64 = 0, d365: Int64 = 0) {
        self.customers = customers
        self.d7 = d7
        self.d30 = d30
        self.d90 = d90
        self.d365 = d365
    }

    /// `[customers, d7, d30, d90, d365]`: the stored column order.
    public var values: [Int64] { [customers, d7, d30, d90, d365] }

    public init?(values: [Int64]) {
        guard values.count == 5 else { return nil }
        self.init(customers: values[0], d7: values[1], d30: values[2], d90: values[3], d365: values[4])
    }

    /// The net revenue within `horizon` days (one of `horizons`).
    public func revenue(within horizon: Int64) -> Int64 {
        switch horizon {
        case 7: return d7
        case 30: return d30
        case 90: return d90
        default: return d365
        }
    }

    public var isZero: Bool { values.allSatisfy { $0 == 0 } }

    public static func + (lhs: LTVMeasures, rhs: LTVMeasures) -> LTVMeasures {
        LTVMeasures(values: zip(lhs.values, rhs.values).map { $0 + $1 })!
    }

    public static func - (lhs: LTVMeasures, rhs: LTVMeasures) -> LTVMeasures {
        LTVMeasures(values: zip(lhs.values, rhs.values).map { $0 - $1 })!
    }
}

/// What one customer's facts of one environment add to the retention cohorts and the realized
/// LTV (docs/analytics.md): the pure half, kept beside `AnalyticsContribution` and applied the
/// same way (the store keeps the last one and adds the difference to the summed rows).
///
/// Retention: each auto-renewable subscription (original transaction) that is not family shared joins the
/// cohort of its first full-price payment (`PeriodType.normal`, paid, not refunded in full, not
/// an upgraded-away transaction) with that payment's product; its paid renewals are the later
/// payments of the same subscription under the same conditions (any paid period type).
///
/// LTV: a customer is first seen at their first purchase that is not family shared (a free trial
/// counts, as for new customers); each paid transaction purchased within 7 / 30 / 90 / 365 days
/// of it adds its gross minus what a refund took back, dated its purchase day. Every row of the
/// customer carries the first purchase's product, group and storefront (the filters select
/// customers by how they were acquired).
///
/// Google Play counts the same way (`PlayAnalyticsCharges`): each order of a subscription line
/// item is a transaction of the subscription that began with the first token of its chain of
/// replacements (`linkedPurchaseToken`, as Apple keeps one original transaction across
/// upgrades), a free-trial or introductory offer phase is not full price, the order a
/// replacement cut short is not a payment (Apple's upgraded-away transaction), and a one-time
/// purchase is a purchase for LTV. A customer of both stores is first seen at the earlier first
/// purchase (the App Store's at equal instants) and their revenue in both counts.
/// - Note: Immutable value; `Sendable`.
public struct CohortContribution: Sendable, Hashable {
    public var retention: [RetentionCohortKey: Int64]
    public var ltv: [LTVCohortKey: LTVMeasures]

    public init(retention: [RetentionCohortKey: Int64] = [:], ltv: [LTVCohortKey: LTVMeasures] = [:]) {
        self.retention = retention
        self.ltv = ltv
    }

    public var isEmpty: Bool { retention.isEmpty && ltv.isEmpty }

    /// The first day of the month containing `instant`.
    public static func month(containing instant: Timestamp) -> CalendarDay {
        let day = CalendarDay(containing: instant)
        return CalendarDay(year: day.year, month: day.month, day: 1)
    }

    public static func of(
        facts: [Fact], environment: AppStoreEnvironment, catalog: ProductCatalog, rule: CommissionRule
    ) -> CohortContribution {
        var latest: [String: TransactionFact] = [:]
        var playFacts: [Fact] = []
        for fact in facts where fact.environment == environment {
            switch fact {
            case .transaction(let transaction):
                if let known = latest[transaction.transactionId], known.signedDate >= transaction.signedDate {
                    continue
                }
                latest[transaction.transactionId] = transaction
            case .playSubscription, .playProductPurchase, .playVoidedPurchase, .playOrder:
                playFacts.append(fact)
            case .renewalInfo, .notification:
                break
            }
        }
        // In purchase order, from each transaction's latest signed version.
        let current = latest.values.sorted(by: FactLedger.byPurchase)
        let proceeds = ProceedsCalculator(rule: rule, catalog: catalog).proceeds(ofLatest: current)
        return of(
            current: current, proceeds: proceeds, playFacts: playFacts, environment: environment, catalog: catalog,
            rule: rule)
    }

    /// The same from what `AnalyticsContribution.figures` has already worked out of the facts:
    /// the latest version of each transaction in purchase order, their proceeds in the same
    /// order (`proceeds[i]` is `current[i]`'s), and the Play facts.
    static func of(
        current: [TransactionFact], proceeds: [TransactionProceeds], playFacts: [Fact],
        environment: AppStoreEnvironment, catalog: ProductCatalog, rule: CommissionRule
    ) -> CohortContribution {
        // Play's charges: `now` only decides trial outcomes, which cohorts do not read.
        let playCharges =
            playFacts.isEmpty
            ? []
            : PlayAnalyticsCharges(
                ledger: FactLedger(facts: playFacts, environment: environment).play,
                now: Timestamp(millisecondsSince1970: 0), catalog: catalog, rule: rule.play
            ).charges.sorted { ($0.purchaseDate, $0.periodId) < ($1.purchaseDate, $1.periodId) }
        var result = CohortContribution()

        var payments: [[CohortPayment]] = []
        // Paired by place rather than looked up by id: two lookups per transaction were a
        // quarter of this function for a long history.
        assert(zip(current, proceeds).allSatisfy { $0.transactionId == $1.transactionId })
        var bySubscription: [String: [CohortPayment]] = [:]
        for (transaction, money) in zip(current, proceeds)
        where !money.isFamilyShared && PaidServiceAccrual.isAutoRenewable(transaction, catalog: catalog) {
            bySubscription[money.originalTransactionId, default: []].append(
                CohortPayment(
                    money, isPayment: money.isPaid && money.refunded < money.gross && !transaction.isUpgraded,
                    periodType: transaction.periodType))
        }
        payments.append(contentsOf: bySubscription.values)
        var byPlaySubscription: [String: [PlayAnalyticsCharges.Charge]] = [:]
        for charge in playCharges {
            guard let subscription = charge.subscription else { continue }
            byPlaySubscription[subscription, default: []].append(charge)
        }
        for charges in byPlaySubscription.values {
            payments.append(
                charges.map { charge in
                    CohortPayment(
                        charge, isPayment: charge.isPaid && charge.refunded < charge.gross && !charge.isReplacedAway)
                })
        }
        for subscription in payments {
            let paid = subscription.filter(\.isPayment)
            guard let start = paid.firstIndex(where: { $0.periodType == .normal }) else { continue }
            let first = paid[start]
            let key = RetentionCohortKey(
                cohortMonth: month(containing: first.purchaseDate), productId: first.productId,
                subscriptionGroup: first.subscriptionGroup, storefront: first.storefront,
                paidRenewals: Int64(paid.count - start - 1))
            result.retention[key, default: 0] += 1
        }

        // Both stores' purchases, in purchase order (the App Store's first at equal instants, as
        // new customers are counted).
        let purchases =
            proceeds.filter { !$0.isFamilyShared }.map { CohortPayment($0, isPayment: $0.isPaid, periodType: nil) }
            + playCharges.map { CohortPayment($0, isPayment: $0.isPaid) }
        guard
            let first = purchases.enumerated().min(by: {
                ($0.element.purchaseDate, $0.offset) < ($1.element.purchaseDate, $1.offset)
            })?.element
        else { return result }
        let cohortMonth = month(containing: first.purchaseDate)
        func key(day: CalendarDay, currency: String) -> LTVCohortKey {
            LTVCohortKey(
                cohortMonth: cohortMonth, productId: first.productId, subscriptionGroup: first.subscriptionGroup,
                storefront: first.storefront, day: day, currency: currency)
        }
        result.ltv[key(day: CalendarDay(containing: first.purchaseDate), currency: first.currency), default: .init()]
            .customers += 1
        let millisecondsPerDay: Int64 = 86_400_000
        let paidPurchases =
            proceeds.filter(\.isPaid).map { CohortPayment($0, isPayment: true, periodType: nil) }
            + playCharges.filter(\.isPaid).map { CohortPayment($0, isPayment: true) }
        for money in paidPurchases {
            let elapsed = money.purchaseDate.millisecondsSince1970 - first.purchaseDate.millisecondsSince1970
            guard elapsed < 365 * millisecondsPerDay else { continue }
            let net = money.gross - money.refunded
            var measures = LTVMeasures()
            if elapsed < 7 * millisecondsPerDay { measures.d7 = net }
            if elapsed < 30 * millisecondsPerDay { measures.d30 = net }
            if elapsed < 90 * millisecondsPerDay { measures.d90 = net }
            measures.d365 = net
            let rowKey = key(day: CalendarDay(containing: money.purchaseDate), currency: money.currency)
            result.ltv[rowKey] = (result.ltv[rowKey] ?? LTVMeasures()) + measures
        }
        result.ltv = result.ltv.filter { !$0.value.isZero }
        return result
    }
}

/// One purchase as the cohorts read it, from either store: an App Store transaction's proceeds
/// or a Google Play charge (an order of a subscription line item, a one-time purchase).
/// - Note: Immutable value; `Sendable`.
struct CohortPayment: Sendable {
    var purchaseDate: Timestamp
    var productId: String
    var subscriptionGroup: String
    var storefront: String
    var currency: String
    var gross: Int64
    var refunded: Int64
    /// Counts as a payment of its subscription for retention (paid, not refunded in full, not
    /// upgraded or replaced away).
    var isPayment: Bool
    var periodType: PeriodType?

    init(_ money: TransactionProceeds, isPayment: Bool, periodType: PeriodType?) {
        (purchaseDate, productId, subscriptionGroup) = (
            money.purchaseDate, money.productId, money.subscriptionGroup ?? ""
        )
        (storefront, currency, gross, refunded) = (
            money.storefront ?? "", money.currency ?? "", money.gross, money.refunded
        )
        self.isPayment = isPayment
        self.periodType = periodType
    }

    init(_ charge: PlayAnalyticsCharges.Charge, isPayment: Bool) {
        (purchaseDate, productId, subscriptionGroup) = (
            charge.purchaseDate, charge.productId, charge.subscriptionGroup ?? ""
        )
        (storefront, currency, gross, refunded) = (charge.storefront, charge.currency, charge.gross, charge.refunded)
        self.isPayment = isPayment
        periodType = charge.periodType
    }
}
