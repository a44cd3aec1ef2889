import AppStoreModels
import Testing

@testable import Entitlements

/// Churn and its reasons: the worked example of docs/analytics.md.
@Suite struct ChurnSummaryTests {
    typealias F = AnalyticsFixture
    typealias Run = ChurnSummary.PaidRun

    @Test func reasonsGroupAsTheDefinitionSays() {
        #expect(ChurnReason(.customerCancelled) == .voluntary)
        #expect(ChurnReason(.priceIncreaseNotConsented) == .voluntary)
        #expect(ChurnReason(.billingError) == .involuntary)
        #expect(ChurnReason(.productNotAvailable) == .productUnavailable)
        #expect(ChurnReason(.other) == .other)
        #expect(ChurnReason(.unknown) == .other)
        #expect(ChurnReason(nil) == .other)
    }

    @Test func theWorkedExample() {
        var runs = (0..<16).map {
            Run(subscription: "s\($0)", start: F.day(2026, 2, 15), end: F.day(2026, 4, 15), expirationReason: nil)
        }
        runs.append(
            Run(
                subscription: "c1", start: F.day(2026, 2, 10), end: F.day(2026, 3, 10),
                expirationReason: .customerCancelled))
        runs.append(Run(subscription: "c1", start: F.day(2026, 3, 20), end: F.day(2026, 4, 20), expirationReason: nil))
        runs.append(
            Run(
                subscription: "c2", start: F.day(2026, 2, 11), end: F.day(2026, 3, 11),
                expirationReason: .customerCancelled))
        runs.append(
            Run(subscription: "b1", start: F.day(2026, 2, 12), end: F.day(2026, 3, 12), expirationReason: .billingError)
        )
        runs.append(
            Run(
                subscription: "p1", start: F.day(2026, 2, 13), end: F.day(2026, 3, 13),
                expirationReason: .priceIncreaseNotConsented))
        // Not active on 03-01: starts in March; and one that ended before.
        runs.append(
            Run(
                subscription: "n1", start: F.day(2026, 3, 2), end: F.day(2026, 3, 9),
                expirationReason: .customerCancelled))
        runs.append(
            Run(subscription: "o1", start: F.day(2026, 1, 1), end: F.day(2026, 3, 1), expirationReason: .billingError))
        let churn = ChurnSummary(runs: runs, from: F.day(2026, 3, 1), to: F.day(2026, 4, 1))
        #expect(churn.activeAtStart == 20)
        #expect(churn.expired == 4)
        #expect(churn.resubscribed == 1)
        #expect(churn.churned == 3)
        #expect(churn.rate.tenThousandths == 1500)
        #expect(churn.rate.decimal == 0.15)
        #expect(churn.byReason == [.voluntary: 2, .involuntary: 1])
    }

    @Test func renewalsThatTouchMergeIntoOneRunCarryingTheLastReason() {
        let runs = ChurnSummary.runs(
            subscription: "s",
            periods: [
                (F.day(2026, 2, 1), F.day(2026, 3, 1), nil),
                (F.day(2026, 1, 1), F.day(2026, 2, 1), nil),
                (F.day(2026, 3, 1), F.day(2026, 4, 1), .billingError),
                (F.day(2026, 5, 1), F.day(2026, 6, 1), .customerCancelled),
                (F.day(2026, 5, 3), F.day(2026, 5, 3), nil),
            ])
        #expect(
            runs == [
                Run(
                    subscription: "s", start: F.day(2026, 1, 1), end: F.day(2026, 4, 1), expirationReason: .billingError
                ),
                Run(
                    subscription: "s", start: F.day(2026, 5, 1), end: F.day(2026, 6, 1),
                    expirationReason: .customerCancelled),
            ])
        #expect(ChurnSummary(runs: [], from: F.day(2026, 3, 1), to: F.day(2026, 4, 1)).rate.decimal == nil)
    }
}
