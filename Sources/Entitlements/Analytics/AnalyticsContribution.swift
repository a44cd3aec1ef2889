import AppStoreModels

/// Everything one customer's facts give the analytics of one environment
/// (`AnalyticsContribution.all`): what the store keeps for the customer and adds to the rows.
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsFigures: Sendable {
    public var daily: [AnalyticsDailyKey: AnalyticsMeasures]
    public var periods: [AnalyticsPeriod]
    public var cohorts: CohortContribution
}

/// What one customer's facts add to the daily aggregates of one environment: the pure half of
/// incremental analytics. The store keeps each customer's last contribution; when the
/// customer is re-evaluated the difference between the new and the old one is added to the
/// daily rows, so the rows always equal the sum of every customer's current contribution.
///
/// Money comes from `ProceedsCalculator`, activity from `SubscriptionActivity` (the billing
/// grace period applies to the latest period of a subscription), trial outcomes from
/// `TrialOutcome` at `now`. Family-shared transactions add only family figures. Google Play
/// purchases (`PlayAnalyticsCharges`, Google's fee from `rule.play`) add to the same figures
/// under rows and periods of the `googlePlay` store; a customer is new once, on its first
/// purchase in either store, under that store.
/// - Note: Stateless; `Sendable`.
public enum AnalyticsContribution {
    public static func of(
        facts: [Fact], environment: AppStoreEnvironment, catalog: ProductCatalog, rule: CommissionRule,
        now: Timestamp
    ) -> [AnalyticsDailyKey: AnalyticsMeasures] {
        figures(facts: facts, environment: environment, catalog: catalog, rule: rule, now: now).daily
    }

    /// The daily rows' contribution and the customer's active periods (`AnalyticsPeriod`),
    /// which the store keeps beside the rows for figures at an instant and churn.
    public static func figures(
        facts: [Fact], environment: AppStoreEnvironment, catalog: ProductCatalog, rule: CommissionRule,
        now: Timestamp
    ) -> (daily: [AnalyticsDailyKey: AnalyticsMeasures], periods: [AnalyticsPeriod]) {
        let all = figures(
            facts: facts, environment: environment, catalog: catalog, rule: rule, now: now, cohorts: false)
        return (all.daily, all.periods)
    }

    /// Everything a re-evaluation stores of the customer's analytics: the daily contribution,
    /// the periods and the cohort contribution (`CohortContribution.of`), reading the facts and
    /// working out the proceeds once for all three.
    public static func all(
        facts: [Fact], environment: AppStoreEnvironment, catalog: ProductCatalog, rule: CommissionRule,
        now: Timestamp
    ) -> AnalyticsFigures {
        let all = figures(facts: facts, environment: environment, catalog: catalog, rule: rule, now: now, cohorts: true)
        return AnalyticsFigures(daily: all.daily, periods: all.periods, cohorts: all.cohorts ?? CohortContribution())
    }

    static func figures(
        facts: [Fact], environment: AppStoreEnvironment, catalog: ProductCatalog, rule: CommissionRule,
        now: Timestamp, cohorts: Bool
    ) -> (daily: [AnalyticsDailyKey: AnalyticsMeasures], periods: [AnalyticsPeriod], cohorts: CohortContribution?) {
        var latest: [String: TransactionFact] = [:]
        var renewals: [String: RenewalFact] = [:]
        var notifications: [String: NotificationFact] = [:]
        // Sized up front from a count of each kind (an upper bound), as `FactLedger` does: grown
        // one fact at a time, each table rehashed every key in it at each doubling.
        let counts = FactLedger.counts(of: facts)
        latest.reserveCapacity(counts.transactions)
        renewals.reserveCapacity(counts.renewals)
        notifications.reserveCapacity(counts.notifications)
        var playFacts: [Fact] = []
        for fact in facts where fact.environment == environment {
            switch fact {
            case .transaction(let transaction):
                keepLater(&latest[transaction.transactionId, default: transaction], transaction) { $0.signedDate }
            case .renewalInfo(let renewal):
                keepLater(&renewals[renewal.originalTransactionId, default: renewal], renewal) { $0.signedDate }
            case .notification(let notification):
                notifications[notification.notificationId] = notification
            case .playSubscription, .playProductPurchase, .playVoidedPurchase, .playOrder:
                playFacts.append(fact)
            }
        }
        // Indices are sorted, not the (large) facts: moving them was a quarter of this function.
        let winners = Array(latest.values)
        let transactions = winners.indices.sorted { FactLedger.byPurchase(winners[$0], winners[$1]) }.map {
            winners[$0]
        }
        let proceeds = ProceedsCalculator(rule: rule, catalog: catalog).proceeds(ofLatest: transactions)
        var byOriginal: [String: [TransactionFact]] = [:]
        for transaction in transactions {
            byOriginal[transaction.originalTransactionId, default: []].append(transaction)
        }
        let latestOfSubscription = Set(byOriginal.values.compactMap { $0.last?.transactionId })

        // A transaction adds to its purchase day, its period's first and last days and a few
        // others (refunds, trials): about four entries.
        var tally = DailyContributionTally(expectedEntries: transactions.count * 4)
        var firstPurchase: TransactionProceeds?
        var periods: [AnalyticsPeriod] = []
        // The tally's number of each period's dimensions, by index in `periods`.
        var periodDimensions: [Int] = []
        var originals: [String: String] = [:]
        for (transaction, money) in zip(transactions, proceeds) {
            let purchaseDay = CalendarDay(containing: money.purchaseDate)
            let dimensions = tally.number(of: money)
            func add(_ day: CalendarDay, _ change: (inout AnalyticsMeasures) -> Void) {
                tally.add(day, dimensions, change)
            }
            if !money.isFamilyShared, firstPurchase == nil { firstPurchase = money }
            if money.isPaid {
                add(purchaseDay) {
                    $0.transactions += 1
                    $0.gross += money.gross
                    $0.proceeds += money.proceeds
                    $0.refunded += money.refunded
                    $0.refundedProceeds += money.refundedProceeds
                }
                if let refundedAt = money.refundedAt {
                    let developerIssue = money.refundReason == .developerIssue
                    add(CalendarDay(containing: refundedAt)) {
                        $0.refunds += 1
                        $0.refundedOnDate += money.refunded
                        if developerIssue {
                            $0.refundsDeveloperIssue += 1
                            $0.refundedOnDateDeveloperIssue += money.refunded
                        }
                        if transaction.revocation?.refundPercentage.map({ $0 < 100_000 }) ?? false {
                            $0.refundsPartial += 1
                        }
                    }
                }
            }
            if money.isFamilyShared, let revokedAt = transaction.revocationDate, !transaction.isUpgraded {
                add(CalendarDay(containing: revokedAt)) { $0.familyRevocations += 1 }
            }
            let grace =
                latestOfSubscription.contains(transaction.transactionId)
                ? renewals[transaction.originalTransactionId]?.gracePeriodExpiresDate : nil
            if let active = SubscriptionActivity.interval(of: transaction, gracePeriodEnd: grace, catalog: catalog) {
                let duration = catalog[transaction.productId]?.duration
                let paid = active.activity == .paid
                let period = AnalyticsPeriod(
                    transactionId: transaction.transactionId,
                    subscription: money.subscriptionGroup ?? money.productId, productId: money.productId,
                    subscriptionGroup: money.subscriptionGroup ?? "", storefront: money.storefront ?? "",
                    currency: money.currency ?? "", activity: active.activity, start: active.start, end: active.end,
                    mrrGross: paid ? duration.map { MonthlyRecurringRevenue.monthly(money.gross, per: $0) } ?? 0 : 0,
                    mrrProceeds: paid
                        ? duration.map { MonthlyRecurringRevenue.monthly(money.proceeds, per: $0) } ?? 0 : 0,
                    run: nil)
                periods.append(period)
                periodDimensions.append(dimensions)
                originals[transaction.transactionId] = transaction.originalTransactionId
                let from = firstMidnight(atOrAfter: active.start)
                let until = firstMidnight(atOrAfter: active.end)
                if from < until {
                    for (day, sign) in [(from, Int64(1)), (until, Int64(-1))] {
                        add(day) {
                            switch active.activity {
                            case .paid:
                                $0.activePaidDelta += sign
                                $0.mrrGrossDelta += sign * period.mrrGross
                                $0.mrrProceedsDelta += sign * period.mrrProceeds
                            case .trial: $0.activeTrialDelta += sign
                            case .familyShared: $0.activeFamilyDelta += sign
                            }
                        }
                    }
                }
            }
            // A trial of what the engine reads as a subscription (the catalog's kind first), as
            // subscriber activity and retention count it.
            if transaction.periodType == .trial, !money.isFamilyShared,
                PaidServiceAccrual.isAutoRenewable(transaction, catalog: catalog)
            {
                let outcome = TrialOutcome.of(
                    trial: transaction, subscription: byOriginal[transaction.originalTransactionId] ?? [],
                    autoRenewOn: renewals[transaction.originalTransactionId]?.autoRenewEnabled, at: now)
                add(purchaseDay) {
                    $0.trialsStarted += 1
                    switch outcome {
                    case .converted: $0.trialsConverted += 1
                    case .pending: $0.trialsPending += 1
                    case .abandoned: $0.trialsAbandoned += 1
                    }
                }
            }
        }
        let play = Self.addPlay(
            facts: playFacts, environment: environment, catalog: catalog, rule: rule.play, now: now,
            tally: &tally, periods: &periods, periodDimensions: &periodDimensions, originals: &originals)
        if let firstPurchase, play.first.map({ firstPurchase.purchaseDate <= $0.purchaseDate }) ?? true {
            tally.add(CalendarDay(containing: firstPurchase.purchaseDate), tally.number(of: firstPurchase)) {
                $0.newCustomers += 1
            }
        } else if let first = play.first {
            tally.add(Self.key(first, day: CalendarDay(containing: first.purchaseDate))) { $0.newCustomers += 1 }
        }
        let paid = periods.indices.filter { periods[$0].activity == .paid }
        let runs = PaidRuns(
            periods: periods, paid: paid, originals: originals, renewals: renewals,
            notifications: Array(notifications.values))
        for run in runs.runs {
            periods[run.carrier].run = run.value
            if periods[run.carrier].store == .googlePlay {
                // Google says why in the subscription itself (`canceledStateContext`), not in
                // App Store notifications.
                let orderId = periods[run.carrier].transactionId
                periods[run.carrier].run?.reason = play.churnReasons[orderId] ?? nil
            }
            let from = firstMidnight(atOrAfter: run.value.start)
            let until = firstMidnight(atOrAfter: periods[run.carrier].end)
            guard from < until else { continue }
            tally.add(from, periodDimensions[run.carrier]) { $0.paidRunsActiveDelta += 1 }
            tally.add(until, periodDimensions[run.carrier]) { $0.paidRunsActiveDelta -= 1 }
        }
        for (key, movement) in Self.movements(periods: periods, paid: paid) {
            tally.add(key) {
                $0.mrrNew += movement.new
                $0.mrrExpansion += movement.expansion
                $0.mrrContraction += movement.contraction
                $0.mrrChurned += movement.churned
                $0.mrrReactivation += movement.reactivation
            }
        }
        // Only refund reversals and consumption requests count; a long history is mostly other
        // notifications, so the rest are passed over before any key is made.
        let counted = notifications.values.filter {
            $0.type == NotificationTypeV2.refundReversed.rawValue
                || $0.type == NotificationTypeV2.consumptionRequest.rawValue
        }.sorted { $0.notificationId < $1.notificationId }
        let moneyById =
            counted.isEmpty ? [:] : Dictionary(uniqueKeysWithValues: proceeds.map { ($0.transactionId, $0) })
        for notification in counted {
            let day = CalendarDay(containing: notification.signedDate)
            let key: AnalyticsDailyKey
            if let id = notification.transactionId, let money = moneyById[id] {
                key = AnalyticsDailyKey(
                    day: day, productId: money.productId, subscriptionGroup: money.subscriptionGroup ?? "",
                    storefront: money.storefront ?? "", currency: money.currency ?? "")
            } else {
                key = AnalyticsDailyKey(
                    day: day, productId: notification.productId ?? "", subscriptionGroup: "", storefront: "",
                    currency: "")
            }
            switch notification.type {
            case NotificationTypeV2.refundReversed.rawValue:
                tally.add(key) { $0.refundReversals += 1 }
            case NotificationTypeV2.consumptionRequest.rawValue:
                // Every notification of the transaction, whether it counts or not (its refund).
                let sameTransaction = notifications.values.filter {
                    $0.transactionId != nil && $0.transactionId == notification.transactionId
                }
                let granted =
                    sameTransaction.contains { $0.type == NotificationTypeV2.refund.rawValue }
                    || notification.transactionId.flatMap { moneyById[$0]?.refundedAt } != nil
                let declined = sameTransaction.contains { $0.type == NotificationTypeV2.refundDeclined.rawValue }
                tally.add(key) {
                    $0.consumptionRequests += 1
                    if granted {
                        $0.consumptionRequestsGranted += 1
                    } else if declined {
                        $0.consumptionRequestsDeclined += 1
                    }
                }
            default:
                continue
            }
        }
        let cohortContribution =
            cohorts
            ? CohortContribution.of(
                current: transactions, proceeds: proceeds, playFacts: playFacts, environment: environment,
                catalog: catalog, rule: rule)
            : nil
        return (tally.contribution, periods, cohortContribution)
    }

    /// Keeps in `slot` the later signed of it and `candidate`, the one read first at equal
    /// instants. Called on `dictionary[key, default: candidate]`, so looking the key up and
    /// storing a new value hash it once, not twice.
    @inline(__always)
    static func keepLater<Value>(_ slot: inout Value, _ candidate: Value, _ signedDate: (Value) -> Timestamp) {
        if signedDate(slot) < signedDate(candidate) { slot = candidate }
    }

    /// The daily-row key of a Play charge on `day`.
    static func key(_ charge: PlayAnalyticsCharges.Charge, day: CalendarDay) -> AnalyticsDailyKey {
        AnalyticsDailyKey(
            day: day, productId: charge.productId, subscriptionGroup: charge.subscriptionGroup ?? "",
            storefront: charge.storefront, currency: charge.currency, store: .googlePlay)
    }

    /// Adds the customer's Google Play charges to `result` and `periods` as the App Store's
    /// transactions are added; answers the first charge (for new customers) and why each
    /// period's access ended (for the runs it carries).
    static func addPlay(
        facts: [Fact], environment: AppStoreEnvironment, catalog: ProductCatalog, rule: PlayCommissionRule,
        now: Timestamp, tally: inout DailyContributionTally, periods: inout [AnalyticsPeriod],
        periodDimensions: inout [Int], originals: inout [String: String]
    ) -> (first: PlayAnalyticsCharges.Charge?, churnReasons: [String: ChurnReason?]) {
        guard !facts.isEmpty else { return (nil, [:]) }
        let ledger = FactLedger(facts: facts, environment: environment).play
        let charges = PlayAnalyticsCharges(ledger: ledger, now: now, catalog: catalog, rule: rule).charges.sorted {
            ($0.purchaseDate, $0.periodId) < ($1.purchaseDate, $1.periodId)
        }
        var churnReasons: [String: ChurnReason?] = [:]
        for charge in charges {
            let dimensions = tally.number(
                DailyContributionTally.Dimensions(
                    productId: charge.productId, subscriptionGroup: charge.subscriptionGroup ?? "",
                    storefront: charge.storefront, currency: charge.currency, store: .googlePlay))
            func add(_ day: CalendarDay, _ change: (inout AnalyticsMeasures) -> Void) {
                tally.add(day, dimensions, change)
            }
            if charge.isPaid {
                add(CalendarDay(containing: charge.purchaseDate)) {
                    $0.transactions += 1
                    $0.gross += charge.gross
                    $0.proceeds += charge.proceeds
                    $0.refunded += charge.refunded
                    $0.refundedProceeds += charge.refundedProceeds
                }
                if let refundedAt = charge.refundedAt {
                    let developerIssue = charge.refundReason == .developerIssue
                    add(CalendarDay(containing: refundedAt)) {
                        $0.refunds += 1
                        $0.refundedOnDate += charge.refunded
                        if developerIssue {
                            $0.refundsDeveloperIssue += 1
                            $0.refundedOnDateDeveloperIssue += charge.refunded
                        }
                        if charge.isPartialRefund { $0.refundsPartial += 1 }
                    }
                }
            }
            if let active = charge.active {
                let duration = catalog[charge.productId]?.duration
                let paid = !charge.isTrial
                let period = AnalyticsPeriod(
                    transactionId: charge.periodId, subscription: charge.subscriptionGroup ?? charge.productId,
                    productId: charge.productId, subscriptionGroup: charge.subscriptionGroup ?? "",
                    storefront: charge.storefront, currency: charge.currency, activity: paid ? .paid : .trial,
                    start: active.start, end: active.end,
                    mrrGross: paid ? duration.map { MonthlyRecurringRevenue.monthly(charge.gross, per: $0) } ?? 0 : 0,
                    mrrProceeds: paid
                        ? duration.map { MonthlyRecurringRevenue.monthly(charge.proceeds, per: $0) } ?? 0 : 0,
                    run: nil, store: .googlePlay)
                periods.append(period)
                periodDimensions.append(dimensions)
                originals[charge.periodId] = charge.purchaseToken
                churnReasons[charge.periodId] = charge.churnReason
                let from = firstMidnight(atOrAfter: active.start)
                let until = firstMidnight(atOrAfter: active.end)
                if from < until {
                    for (day, sign) in [(from, Int64(1)), (until, Int64(-1))] {
                        add(day) {
                            if paid {
                                $0.activePaidDelta += sign
                                $0.mrrGrossDelta += sign * period.mrrGross
                                $0.mrrProceedsDelta += sign * period.mrrProceeds
                            } else {
                                $0.activeTrialDelta += sign
                            }
                        }
                    }
                }
            }
            if let outcome = charge.trialOutcome {
                add(CalendarDay(containing: charge.purchaseDate)) {
                    $0.trialsStarted += 1
                    switch outcome {
                    case .converted: $0.trialsConverted += 1
                    case .pending: $0.trialsPending += 1
                    case .abandoned: $0.trialsAbandoned += 1
                    }
                }
            }
        }
        return (charges.first, churnReasons)
    }

    /// The MRR movement of each subscription and currency between consecutive midnights where
    /// its MRR changes, dated the day the change happened (the day before the midnight) and
    /// keyed by the period in force after it (before it, for churn).
    static func movements(periods: [AnalyticsPeriod], paid: [Int]) -> [(AnalyticsDailyKey, MRRMovement)] {
        struct Group: Hashable {
            var store: String
            var subscription: String
            var currency: String
        }
        var groups: [Group: [Int]] = [:]
        for index in paid {
            let period = periods[index]
            groups[
                Group(store: period.store.rawValue, subscription: period.subscription, currency: period.currency),
                default: []
            ].append(index)
        }
        typealias Member = (period: Int, from: CalendarDay, until: CalendarDay)
        var result: [(AnalyticsDailyKey, MRRMovement)] = []
        // In the order of the groups' names (store, subscription, currency), as before.
        for name in groups.keys.sorted(by: {
            ($0.store, $0.subscription, $0.currency) < ($1.store, $1.subscription, $1.currency)
        }) {
            let members: [Member] = groups[name]!.map { index in
                (
                    period: index, from: firstMidnight(atOrAfter: periods[index].start),
                    until: firstMidnight(atOrAfter: periods[index].end)
                )
            }.filter { $0.from < $0.until }.sorted { $0.from < $1.from }
            let boundaries = Set(members.flatMap { [$0.from, $0.until] }).sorted()
            var before: Int64 = 0
            var paidBefore = false
            // A sweep over the boundaries in order: `open` holds the members started by the
            // boundary and not ended before it, so each boundary looks at the few periods in
            // force around it rather than at the whole history.
            var open: [Member] = []
            var nextMember = 0
            func isLater(_ lhs: Member, than rhs: Member) -> Bool {
                (periods[lhs.period].start, periods[lhs.period].transactionId)
                    > (periods[rhs.period].start, periods[rhs.period].transactionId)
            }
            for boundary in boundaries {
                while nextMember < members.count, members[nextMember].from <= boundary {
                    open.append(members[nextMember])
                    nextMember += 1
                }
                open.removeAll { $0.until < boundary }
                var after: Int64 = 0
                var latestCovering: Member?
                var latestPrevious: Member?
                let dayBefore = boundary.adding(days: -1)
                for member in open {
                    if boundary < member.until {
                        after += periods[member.period].mrrGross
                        if latestCovering.map({ isLater(member, than: $0) }) ?? true { latestCovering = member }
                    }
                    if member.from <= dayBefore, latestPrevious.map({ isLater(member, than: $0) }) ?? true {
                        latestPrevious = member
                    }
                }
                let movement = MRRMovement(before: before, after: after, paidBefore: paidBefore)
                if movement != MRRMovement(), let keyed = after > 0 ? latestCovering : latestPrevious {
                    result.append((periods[keyed.period].key(day: dayBefore), movement))
                }
                paidBefore = paidBefore || after > 0
                before = after
            }
        }
        return result
    }

    /// The day of the first midnight at or after `instant`: a period active from `instant` is
    /// active at that midnight and every later one until its end.
    static func firstMidnight(atOrAfter instant: Timestamp) -> CalendarDay {
        CalendarDay(containing: instant.adding(milliseconds: -1)).adding(days: 1)
    }
}
