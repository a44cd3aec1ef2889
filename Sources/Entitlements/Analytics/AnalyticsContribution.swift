import AppStoreModels

/// What one customer's facts add to the daily aggregates of one environment: the pure half of
/// incremental analytics. The store keeps each customer's last contribution; when the
/// customer is re-evaluated the difference between the new and the old one is added to the
/// daily rows, so the rows always equal the sum of every customer's current contribution.
///
/// Money comes from `ProceedsCalculator`, activity from `SubscriptionActivity` (the billing
/// grace period applies to the latest period of a subscription), trial outcomes from
/// `TrialOutcome` at `now`. Family-shared transactions add only family figures.
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
        var latest: [String: TransactionFact] = [:]
        var renewals: [String: RenewalFact] = [:]
        var notifications: [String: NotificationFact] = [:]
        for fact in facts where fact.environment == environment {
            switch fact {
            case .transaction(let transaction):
                if let known = latest[transaction.transactionId], known.signedDate >= transaction.signedDate {
                    continue
                }
                latest[transaction.transactionId] = transaction
            case .renewalInfo(let renewal):
                if let known = renewals[renewal.originalTransactionId], known.signedDate >= renewal.signedDate {
                    continue
                }
                renewals[renewal.originalTransactionId] = renewal
            case .notification(let notification):
                notifications[notification.notificationId] = notification
            case .playSubscription, .playProductPurchase, .playVoidedPurchase:
                // Google Play's analytics figures are not rolled up yet (issue 15, part 3).
                continue
            }
        }
        let transactions = latest.values.sorted {
            $0.purchaseDate != $1.purchaseDate ? $0.purchaseDate < $1.purchaseDate : $0.transactionId < $1.transactionId
        }
        let proceeds = ProceedsCalculator(rule: rule, catalog: catalog).proceeds(of: transactions)
        var byOriginal: [String: [TransactionFact]] = [:]
        for transaction in transactions {
            byOriginal[transaction.originalTransactionId, default: []].append(transaction)
        }
        let latestOfSubscription = Set(byOriginal.values.compactMap { $0.last?.transactionId })

        var result: [AnalyticsDailyKey: AnalyticsMeasures] = [:]
        func add(_ day: CalendarDay, _ money: TransactionProceeds, _ change: (inout AnalyticsMeasures) -> Void) {
            let key = AnalyticsDailyKey(
                day: day, productId: money.productId, subscriptionGroup: money.subscriptionGroup ?? "",
                storefront: money.storefront ?? "", currency: money.currency ?? "")
            change(&result[key, default: AnalyticsMeasures()])
        }
        var firstPurchase: TransactionProceeds?
        var periods: [AnalyticsPeriod] = []
        var originals: [String: String] = [:]
        for (transaction, money) in zip(transactions, proceeds) {
            let purchaseDay = CalendarDay(containing: money.purchaseDate)
            if !money.isFamilyShared, firstPurchase == nil { firstPurchase = money }
            if money.isPaid {
                add(purchaseDay, money) {
                    $0.transactions += 1
                    $0.gross += money.gross
                    $0.proceeds += money.proceeds
                    $0.refunded += money.refunded
                    $0.refundedProceeds += money.refundedProceeds
                }
                if let refundedAt = money.refundedAt {
                    let developerIssue = money.refundReason == .developerIssue
                    add(CalendarDay(containing: refundedAt), money) {
                        $0.refunds += 1
                        $0.refundedOnDate += money.refunded
                        if developerIssue {
                            $0.refundsDeveloperIssue += 1
                            $0.refundedOnDateDeveloperIssue += money.refunded
                        }
                    }
                }
            }
            if money.isFamilyShared, let revokedAt = transaction.revocationDate, !transaction.isUpgraded {
                add(CalendarDay(containing: revokedAt), money) { $0.familyRevocations += 1 }
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
                originals[transaction.transactionId] = transaction.originalTransactionId
                let from = firstMidnight(atOrAfter: active.start)
                let until = firstMidnight(atOrAfter: active.end)
                if from < until {
                    for (day, sign) in [(from, Int64(1)), (until, Int64(-1))] {
                        add(day, money) {
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
            if transaction.periodType == .trial, !money.isFamilyShared {
                let outcome = TrialOutcome.of(
                    trial: transaction, subscription: byOriginal[transaction.originalTransactionId] ?? [],
                    autoRenewOn: renewals[transaction.originalTransactionId]?.autoRenewEnabled, at: now)
                add(purchaseDay, money) {
                    $0.trialsStarted += 1
                    switch outcome {
                    case .converted: $0.trialsConverted += 1
                    case .pending: $0.trialsPending += 1
                    case .abandoned: $0.trialsAbandoned += 1
                    }
                }
            }
        }
        if let firstPurchase {
            add(CalendarDay(containing: firstPurchase.purchaseDate), firstPurchase) { $0.newCustomers += 1 }
        }
        func addKey(_ key: AnalyticsDailyKey, _ change: (inout AnalyticsMeasures) -> Void) {
            change(&result[key, default: AnalyticsMeasures()])
        }
        let paid = periods.indices.filter { periods[$0].activity == .paid }
        let runs = PaidRuns(
            periods: periods, paid: paid, originals: originals, renewals: renewals,
            notifications: Array(notifications.values))
        for run in runs.runs {
            periods[run.carrier].run = run.value
            let from = firstMidnight(atOrAfter: run.value.start)
            let until = firstMidnight(atOrAfter: periods[run.carrier].end)
            guard from < until else { continue }
            addKey(periods[run.carrier].key(day: from)) { $0.paidRunsActiveDelta += 1 }
            addKey(periods[run.carrier].key(day: until)) { $0.paidRunsActiveDelta -= 1 }
        }
        for (key, movement) in Self.movements(periods: periods, paid: paid) {
            addKey(key) {
                $0.mrrNew += movement.new
                $0.mrrExpansion += movement.expansion
                $0.mrrContraction += movement.contraction
                $0.mrrChurned += movement.churned
                $0.mrrReactivation += movement.reactivation
            }
        }
        let moneyById = Dictionary(uniqueKeysWithValues: proceeds.map { ($0.transactionId, $0) })
        let sortedNotifications = notifications.values.sorted { $0.notificationId < $1.notificationId }
        for notification in sortedNotifications {
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
                addKey(key) { $0.refundReversals += 1 }
            case NotificationTypeV2.consumptionRequest.rawValue:
                let sameTransaction = sortedNotifications.filter {
                    $0.transactionId != nil && $0.transactionId == notification.transactionId
                }
                let granted =
                    sameTransaction.contains { $0.type == NotificationTypeV2.refund.rawValue }
                    || notification.transactionId.flatMap { moneyById[$0]?.refundedAt } != nil
                let declined = sameTransaction.contains { $0.type == NotificationTypeV2.refundDeclined.rawValue }
                addKey(key) {
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
        return (result.filter { !$0.value.isZero }, periods)
    }

    /// The MRR movement of each subscription and currency between consecutive midnights where
    /// its MRR changes, dated the day the change happened (the day before the midnight) and
    /// keyed by the period in force after it (before it, for churn).
    static func movements(periods: [AnalyticsPeriod], paid: [Int]) -> [(AnalyticsDailyKey, MRRMovement)] {
        var groups: [String: [Int]] = [:]
        for index in paid {
            groups[periods[index].subscription + "\u{0}" + periods[index].currency, default: []].append(index)
        }
        var result: [(AnalyticsDailyKey, MRRMovement)] = []
        for name in groups.keys.sorted() {
            let members = groups[name]!.map { index in
                (
                    period: periods[index], from: firstMidnight(atOrAfter: periods[index].start),
                    until: firstMidnight(atOrAfter: periods[index].end)
                )
            }.filter { $0.from < $0.until }
            let boundaries = Set(members.flatMap { [$0.from, $0.until] }).sorted()
            var before: Int64 = 0
            var paidBefore = false
            for boundary in boundaries {
                let covering = members.filter { $0.from <= boundary && boundary < $0.until }
                let after = covering.reduce(Int64(0)) { $0 + $1.period.mrrGross }
                let movement = MRRMovement(before: before, after: after, paidBefore: paidBefore)
                if movement != MRRMovement() {
                    let previous = members.filter { $0.from <= boundary.adding(days: -1) && boundary <= $0.until }
                    let keyed = (after > 0 ? covering : previous).max {
                        ($0.period.start, $0.period.transactionId) < ($1.period.start, $1.period.transactionId)
                    }
                    if let keyed {
                        result.append((keyed.period.key(day: boundary.adding(days: -1)), movement))
                    }
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
