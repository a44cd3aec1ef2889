import AppStoreModels
import Testing

@testable import Entitlements

/// Trial outcomes and the conversion rate: the worked example of docs/analytics.md.
@Suite struct TrialOutcomeTests {
    typealias F = AnalyticsFixture

    func trial(_ id: String, from start: Timestamp) -> TransactionFact {
        F.transaction(
            id, "weekly", from: start, to: start.adding(milliseconds: 7 * F.dayMilliseconds), price: 0,
            periodType: .trial, original: id)
    }

    @Test func theWorkedExample() {
        let at = F.day(2026, 2, 3)
        let converted = trial("converted", from: F.day(2026, 1, 5))
        let paid = F.transaction(
            "converted-paid", "weekly", from: F.day(2026, 1, 12), to: F.day(2026, 1, 19), price: 2990,
            original: "converted")
        let running = trial("running", from: F.day(2026, 1, 31))
        let turnedOff = trial("turned-off", from: F.day(2026, 1, 30))
        let expired = trial("expired", from: F.day(2026, 1, 10))
        let outcomes = [
            TrialOutcome.of(trial: converted, subscription: [converted, paid], autoRenewOn: true, at: at),
            TrialOutcome.of(trial: running, subscription: [running], autoRenewOn: true, at: at),
            TrialOutcome.of(trial: turnedOff, subscription: [turnedOff], autoRenewOn: false, at: at),
            TrialOutcome.of(trial: expired, subscription: [expired], autoRenewOn: true, at: at),
        ]
        #expect(outcomes == [.converted, .pending, .abandoned, .abandoned])
        let conversion = TrialConversion(outcomes: outcomes)
        #expect([conversion.started, conversion.converted, conversion.pending, conversion.abandoned] == [4, 1, 1, 2])
        #expect(conversion.rate.tenThousandths == 2500)
        #expect(TrialConversion(outcomes: []).rate.tenThousandths == nil)
    }

    @Test func aFamilySharedPaidPeriodIsNotAConversion() {
        let at = F.day(2026, 2, 3)
        let start = F.day(2026, 1, 5)
        let shared = F.transaction(
            "shared", "weekly", from: F.day(2026, 1, 12), to: F.day(2026, 1, 19), price: 2990,
            ownership: .familyShared, original: "t")
        let t = trial("t", from: start)
        #expect(TrialOutcome.of(trial: t, subscription: [t, shared], autoRenewOn: nil, at: at) == .abandoned)
        #expect(TrialOutcome.of(trial: t, subscription: [t], autoRenewOn: nil, at: F.day(2026, 1, 6)) == .pending)
    }
}
