import AppStoreModels
import Testing

@testable import Entitlements

/// MRR normalisation and sums, against the worked example of docs/analytics.md.
@Suite struct MonthlyRecurringRevenueTests {
    typealias F = AnalyticsFixture

    @Test func factorsFollowTheDefinition() {
        func monthly(_ amount: Int64, _ period: String) -> Int64 {
            MonthlyRecurringRevenue.monthly(amount, per: SubscriptionPeriod(iso8601: period)!)
        }
        #expect(monthly(2990, "P1W") == 11960)
        #expect(monthly(2990, "P2W") == 5980)
        #expect(monthly(9990, "P1M") == 9990)
        #expect(monthly(9990, "P2M") == 4995)
        #expect(monthly(24990, "P3M") == 8330)
        #expect(monthly(59990, "P6M") == 9998)  // 9998.33
        #expect(monthly(59990, "P1Y") == 4999)  // 4999.17
        #expect(monthly(2990, "P3D") == 29900)  // × 30 / 3
        #expect(monthly(9990, "P4M") == 2498)  // × 30 / 120 = 2497.5, half away from zero
        #expect(monthly(9990, "P2Y") == 411)  // × 30 / 730 = 410.55
    }

    @Test func theWorkedExampleSumsToExactMilliunits() {
        let calculator = ProceedsCalculator(rule: CommissionRule(), catalog: F.catalog)
        let start = F.day(2026, 3, 1)
        let proceeds = calculator.proceeds(of: [
            F.transaction("w", "weekly", from: start, to: nil, price: 2990, original: "w"),
            F.transaction("m", "monthly", from: start, to: nil, price: 9990, original: "m"),
            F.transaction("y", "yearly", from: start, to: nil, price: 59990, original: "y"),
            F.transaction("q", "quarterly", from: start, to: nil, price: 24990, original: "q"),
            F.transaction("eur", "monthly", from: start, to: nil, price: 8990, currency: "EUR", original: "e"),
            F.transaction("trial", "monthly", from: start, to: nil, price: 0, periodType: .trial, original: "t"),
        ])
        let durations: [String: String] = [
            "w": "P1W", "m": "P1M", "y": "P1Y", "q": "P3M", "eur": "P1M", "trial": "P1M",
        ]
        let figures = MonthlyRecurringRevenue.figures(
            of: proceeds.map { ($0, SubscriptionPeriod(iso8601: durations[$0.transactionId]!)!) })
        #expect(
            figures == [
                .init(currency: "EUR", gross: 8990, proceeds: 6293),
                .init(currency: "USD", gross: 35279, proceeds: 24695),
            ])
        #expect(figures[1].annualGross == 423_348)
    }
}
