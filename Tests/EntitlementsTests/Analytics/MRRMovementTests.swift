import AppStoreModels
import Testing

@testable import Entitlements

/// MRR movement, paid runs and refund requests in a customer's contribution
/// (docs/analytics.md, "MRR movement" and "Churn").
@Suite struct MRRMovementTests {
    typealias F = AnalyticsFixture

    @Test func eachChangeIsOneMovementThatExplainsIt() {
        #expect(MRRMovement(before: 0, after: 9990, paidBefore: false) == MRRMovement(new: 9990))
        #expect(MRRMovement(before: 0, after: 4999, paidBefore: true) == MRRMovement(reactivation: 4999))
        #expect(MRRMovement(before: 9990, after: 0, paidBefore: true) == MRRMovement(churned: 9990))
        #expect(MRRMovement(before: 9990, after: 11960, paidBefore: true) == MRRMovement(expansion: 1970))
        #expect(MRRMovement(before: 11960, after: 4999, paidBefore: true) == MRRMovement(contraction: 6961))
        #expect(MRRMovement(before: 9990, after: 9990, paidBefore: true) == MRRMovement())
        for (before, after) in [(Int64(0), Int64(9990)), (9990, 0), (9990, 11960), (11960, 4999), (5, 5)] {
            #expect(MRRMovement(before: before, after: after, paidBefore: true).net == after - before)
        }
    }

    /// The churn rule's boundary: a run ending exactly at the end of the period is not active at
    /// the next period's start, so it expired in this one (it was counted nowhere before).
    @Test func aRunEndingAtThePeriodsEndExpiredInIt() {
        let run = ChurnSummary.PaidRun(
            subscription: "s", start: F.day(2026, 2, 1), end: F.day(2026, 4, 1), expirationReason: .billingError)
        let march = ChurnSummary(runs: [run], from: F.day(2026, 3, 1), to: F.day(2026, 4, 1))
        #expect(march.activeAtStart == 1)
        #expect(march.expired == 1)
        #expect(march.churned == 1)
        #expect(march.byReason == [.involuntary: 1])
        let april = ChurnSummary(runs: [run], from: F.day(2026, 4, 1), to: F.day(2026, 5, 1))
        #expect(april.activeAtStart == 0)
    }

    static let catalog = F.catalog

    /// Monthly 9.99 from 2026-01-10 12:00 renewed once (one run to 03-10 12:00, ended by a
    /// voluntary EXPIRED), then yearly 59.99 from 04-05 12:00 (a reactivation; the renewal info
    /// says billing error); a reversal and two refund requests, one declined.
    static func facts() -> [Fact] {
        let noon: Int64 = 12 * 3_600_000
        func at(_ month: Int, _ day: Int, year: Int = 2026) -> Timestamp {
            F.day(year, month, day).adding(milliseconds: noon)
        }
        var t1 = F.transaction("t1", "monthly", from: at(1, 10), to: at(2, 10), price: 9990)
        t1.subscriptionGroup = "premium"
        var t2 = F.transaction("t2", "monthly", from: at(2, 10), to: at(3, 10), price: 9990)
        t2.subscriptionGroup = "premium"
        var t3 = F.transaction("t3", "yearly", from: at(4, 5), to: at(4, 5, year: 2027), price: 59990)
        t3.subscriptionGroup = "premium"
        func notification(
            _ id: String, _ type: NotificationTypeV2, _ subtype: String?, _ transaction: String, _ at: Timestamp
        )
            -> Fact
        {
            .notification(
                NotificationFact(
                    notificationId: id, type: type.rawValue, subtype: subtype, signedDate: at, environment: .production,
                    originalTransactionId: "orig-1", transactionId: transaction))
        }
        return [
            .transaction(t1), .transaction(t2), .transaction(t3),
            .renewalInfo(
                RenewalFact(
                    originalTransactionId: "orig-1", productId: "yearly", autoRenewEnabled: true, expirationIntent: 2,
                    signedDate: at(4, 5), environment: .production)),
            notification("n1", .expired, Subtype.voluntary.rawValue, "t2", at(3, 10).adding(milliseconds: 60_000)),
            notification("n2", .refundReversed, nil, "t1", at(2, 1)),
            notification("n3", .consumptionRequest, nil, "t2", at(2, 20)),
            notification("n4", .refundDeclined, nil, "t2", at(2, 25)),
            notification("n5", .consumptionRequest, nil, "t1", at(2, 2)),
        ]
    }

    @Test func aCustomersMovementRunsAndRefundRequests() {
        let (daily, periods) = AnalyticsContribution.figures(
            facts: Self.facts(), environment: .production, catalog: Self.catalog, rule: CommissionRule(),
            now: F.day(2026, 5, 1))
        func key(_ month: Int, _ day: Int, _ product: String, year: Int = 2026) -> AnalyticsDailyKey {
            AnalyticsDailyKey(
                day: CalendarDay(year: year, month: month, day: day), productId: product, subscriptionGroup: "premium",
                storefront: "USA", currency: "USD")
        }
        // Movement on the day each change happened.
        #expect(daily[key(1, 10, "monthly")]?.mrrNew == 9990)
        #expect(daily[key(3, 10, "monthly")]?.mrrChurned == 9990)
        #expect(daily[key(4, 5, "yearly")]?.mrrReactivation == 4999)
        #expect(daily[key(4, 5, "yearly", year: 2027)]?.mrrChurned == 4999)
        let moved = daily.values.reduce(AnalyticsMeasures(), +)
        #expect(
            [moved.mrrNew, moved.mrrExpansion, moved.mrrContraction, moved.mrrChurned, moved.mrrReactivation] == [
                9990, 0, 0, 14989, 4999,
            ])
        // Every day, the movement dated the day before a midnight explains the MRR change at it.
        let days = Set(daily.keys.map(\.day))
        for day in days {
            let atMidnight = daily.filter { $0.key.day == day }.values.reduce(Int64(0)) { $0 + $1.mrrGrossDelta }
            let movement = daily.filter { $0.key.day == day.adding(days: -1) }.values.reduce(AnalyticsMeasures(), +)
            let net =
                movement.mrrNew + movement.mrrExpansion - movement.mrrContraction - movement.mrrChurned
                + movement.mrrReactivation
            #expect(net == atMidnight, "\(day)")
        }
        // Paid runs: +1 on each run's first midnight, −1 on the first after it.
        #expect(daily[key(1, 11, "monthly")]?.paidRunsActiveDelta == 1)
        #expect(daily[key(3, 11, "monthly")]?.paidRunsActiveDelta == -1)
        #expect(daily[key(4, 6, "yearly")]?.paidRunsActiveDelta == 1)
        #expect(daily[key(4, 6, "yearly", year: 2027)]?.paidRunsActiveDelta == -1)
        // Refund reversal and requests on the notification's day.
        #expect(daily[key(2, 1, "monthly")]?.refundReversals == 1)
        #expect(daily[key(2, 20, "monthly")]?.consumptionRequests == 1)
        #expect(daily[key(2, 20, "monthly")]?.consumptionRequestsDeclined == 1)
        #expect(daily[key(2, 2, "monthly")]?.consumptionRequests == 1)
        #expect(daily[key(2, 2, "monthly")]?.consumptionRequestsDeclined == 0)
        #expect(daily[key(2, 2, "monthly")]?.consumptionRequestsGranted == 0)

        let noon: Int64 = 12 * 3_600_000
        #expect(periods.map(\.transactionId) == ["t1", "t2", "t3"])
        #expect(periods.map(\.mrrGross) == [9990, 9990, 4999])
        #expect(periods.map(\.mrrProceeds) == [6993, 6993, 3499])
        #expect(periods[0].run == nil)
        #expect(
            periods[1].run
                == AnalyticsPeriod.Run(
                    start: F.day(2026, 1, 10).adding(milliseconds: noon),
                    nextStart: F.day(2026, 4, 5).adding(milliseconds: noon), reason: .voluntary))
        #expect(
            periods[2].run
                == AnalyticsPeriod.Run(
                    start: F.day(2026, 4, 5).adding(milliseconds: noon), nextStart: nil, reason: .involuntary))
    }

    @Test func aRefundGrantsTheRequest() {
        var facts = Self.facts()
        facts.append(
            .notification(
                NotificationFact(
                    notificationId: "n6", type: NotificationTypeV2.refund.rawValue, signedDate: F.day(2026, 2, 4),
                    environment: .production, originalTransactionId: "orig-1", transactionId: "t1")))
        let daily = AnalyticsContribution.of(
            facts: facts, environment: .production, catalog: Self.catalog, rule: CommissionRule(),
            now: F.day(2026, 5, 1))
        let key = AnalyticsDailyKey(
            day: CalendarDay(year: 2026, month: 2, day: 2), productId: "monthly", subscriptionGroup: "premium",
            storefront: "USA", currency: "USD")
        #expect(daily[key]?.consumptionRequestsGranted == 1)
    }

    @Test func contributionsStoredBeforeMigration15ReadWithZeros() {
        let old = Array(1...20).map(Int64.init)
        let measures = AnalyticsMeasures(values: old)
        #expect(measures?.trialsAbandoned == 20)
        #expect(measures?.values.suffix(10) == Array(repeating: 0, count: 10))
        #expect(AnalyticsMeasures(values: Array(repeating: 1, count: 21)) == nil)
    }

    /// Overlapping periods of one subscription starting at the same instant: the movement is
    /// keyed by the later of them by transaction id, the one in force after each boundary (or,
    /// for churn, before it); a period of another currency moves apart.
    @Test func equalStartsAreKeyedByTheLaterTransaction() {
        func period(_ id: String, _ product: String, mrr: Int64, currency: String = "USD") -> AnalyticsPeriod {
            AnalyticsPeriod(
                transactionId: id, subscription: "premium", productId: product, subscriptionGroup: "premium",
                storefront: "USA", currency: currency, activity: .paid,
                start: F.day(2026, 1, 1).adding(milliseconds: 1),
                end: F.day(2026, 1, 10).adding(milliseconds: 1), mrrGross: mrr, mrrProceeds: mrr, run: nil)
        }
        let periods = [
            period("b", "pb", mrr: 200), period("a", "pa", mrr: 100), period("c", "pc", mrr: 50, currency: "EUR"),
        ]
        let movements = AnalyticsContribution.movements(periods: periods, paid: [0, 1, 2])
        func key(_ product: String, _ day: Int, _ currency: String = "USD") -> AnalyticsDailyKey {
            AnalyticsDailyKey(
                day: CalendarDay(year: 2026, month: 1, day: day), productId: product, subscriptionGroup: "premium",
                storefront: "USA", currency: currency)
        }
        #expect(movements.count == 4)
        #expect(movements.contains { $0 == (key("pb", 1), MRRMovement(new: 300)) })
        #expect(movements.contains { $0 == (key("pb", 10), MRRMovement(churned: 300)) })
        #expect(movements.contains { $0 == (key("pc", 1, "EUR"), MRRMovement(new: 50)) })
        #expect(movements.contains { $0 == (key("pc", 10, "EUR"), MRRMovement(churned: 50)) })
    }
}
