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
        var latest: [String: TransactionFact] = [:]
        var renewals: [String: RenewalFact] = [:]
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
            case .notification:
                continue
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
                let from = firstMidnight(atOrAfter: active.start)
                let until = firstMidnight(atOrAfter: active.end)
                if from < until {
                    let duration = catalog[transaction.productId]?.duration
                    let mrrGross = duration.map { MonthlyRecurringRevenue.monthly(money.gross, per: $0) } ?? 0
                    let mrrProceeds = duration.map { MonthlyRecurringRevenue.monthly(money.proceeds, per: $0) } ?? 0
                    for (day, sign) in [(from, Int64(1)), (until, Int64(-1))] {
                        add(day, money) {
                            switch active.activity {
                            case .paid:
                                $0.activePaidDelta += sign
                                $0.mrrGrossDelta += sign * mrrGross
                                $0.mrrProceedsDelta += sign * mrrProceeds
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
        return result.filter { !$0.value.isZero }
    }

    /// The day of the first midnight at or after `instant`: a period active from `instant` is
    /// active at that midnight and every later one until its end.
    static func firstMidnight(atOrAfter instant: Timestamp) -> CalendarDay {
        CalendarDay(containing: instant.adding(milliseconds: -1)).adding(days: 1)
    }
}
