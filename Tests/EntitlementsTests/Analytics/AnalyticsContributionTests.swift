import AppStoreModels
import Testing

@testable import Entitlements

/// What one customer's facts add to the daily aggregates, row by row, by hand.
@Suite struct AnalyticsContributionTests {
    typealias F = AnalyticsFixture

    static func noon(_ day: Int) -> Timestamp { F.day(2026, 1, day).adding(milliseconds: 12 * 3_600_000) }

    func key(_ day: Int, currency: String = "USD") -> AnalyticsDailyKey {
        AnalyticsDailyKey(
            day: CalendarDay(year: 2026, month: 1, day: day), productId: "weekly", subscriptionGroup: "premium",
            storefront: "USA", currency: currency)
    }

    @Test func aConvertedTrialThenAPaidWeekInItsGracePeriod() {
        let trial = F.transaction(
            "t0", "weekly", from: Self.noon(1), to: Self.noon(8), price: 0, periodType: .trial, original: "o")
        var paid = F.transaction("t1", "weekly", from: Self.noon(8), to: Self.noon(15), price: 2990, original: "o")
        paid.subscriptionGroup = "premium"
        var trialInGroup = trial
        trialInGroup.subscriptionGroup = "premium"
        let renewal = RenewalFact(
            originalTransactionId: "o", productId: "weekly", autoRenewEnabled: true,
            gracePeriodExpiresDate: F.day(2026, 1, 20), signedDate: Self.noon(15), environment: .production)
        let facts: [Fact] = [.transaction(trialInGroup), .transaction(paid), .renewalInfo(renewal)]
        let contribution = AnalyticsContribution.of(
            facts: facts, environment: .production, catalog: F.catalog, rule: CommissionRule(), now: F.day(2026, 1, 16))

        var first = AnalyticsMeasures()
        first.newCustomers = 1
        first.trialsStarted = 1
        first.trialsConverted = 1
        var trialStarts = AnalyticsMeasures()
        trialStarts.activeTrialDelta = 1
        var purchase = AnalyticsMeasures()
        purchase.transactions = 1
        purchase.gross = 2990
        purchase.proceeds = 2093
        // The paid week's MRR appears at the next midnight: a new subscription on the 8th.
        purchase.mrrNew = 11960
        var switchover = AnalyticsMeasures()
        switchover.activeTrialDelta = -1
        switchover.activePaidDelta = 1
        switchover.mrrGrossDelta = 11960
        switchover.mrrProceedsDelta = 8372
        switchover.paidRunsActiveDelta = 1
        var graceEnds = AnalyticsMeasures()
        graceEnds.activePaidDelta = -1
        graceEnds.paidRunsActiveDelta = -1
        // The grace period ends at the midnight starting the 20th: churned on the 19th.
        var churned = AnalyticsMeasures()
        churned.mrrChurned = 11960
        graceEnds.mrrGrossDelta = -11960
        graceEnds.mrrProceedsDelta = -8372
        #expect(
            contribution == [
                key(1): first, key(2): trialStarts, key(8): purchase, key(9): switchover, key(19): churned,
                key(20): graceEnds,
            ])
        // Sandbox facts are another environment's.
        #expect(
            AnalyticsContribution.of(
                facts: facts, environment: .sandbox, catalog: F.catalog, rule: CommissionRule(), now: F.day(2026, 1, 16)
            ).isEmpty)
    }

    @Test func aFamilyMemberAddsOnlyFamilyFigures() {
        let shared = F.transaction(
            "f", "weekly", from: Self.noon(1), to: Self.noon(8), price: 2990, ownership: .familyShared,
            revokedAt: Self.noon(3), revocationType: .familyRevoke)
        let contribution = AnalyticsContribution.of(
            facts: [.transaction(shared)], environment: .production, catalog: F.catalog, rule: CommissionRule(),
            now: F.day(2026, 1, 16))
        var starts = AnalyticsMeasures()
        starts.activeFamilyDelta = 1
        var revoked = AnalyticsMeasures()
        revoked.familyRevocations = 1
        var ends = AnalyticsMeasures()
        ends.activeFamilyDelta = -1
        let keys = [2, 3, 4].map {
            AnalyticsDailyKey(
                day: CalendarDay(year: 2026, month: 1, day: $0), productId: "weekly", subscriptionGroup: "premium",
                storefront: "USA", currency: "USD")
        }
        #expect(contribution == [keys[0]: starts, keys[1]: revoked, keys[2]: ends])
    }

    @Test func measuresRoundTripThroughTheirColumns() {
        var measures = AnalyticsMeasures()
        measures.trialsAbandoned = 7
        measures.gross = -3
        #expect(AnalyticsMeasures(values: measures.values) == measures)
        #expect(AnalyticsMeasures(values: [1, 2]) == nil)
        #expect(AnalyticsMeasures.columns.count == measures.values.count)
        #expect((measures - measures).isZero)
    }

    /// A trial counts where its subscription does: on a product the engine and the subscriber
    /// counts read as auto-renewable (the catalog's kind, else Apple's). Apple's trial on a
    /// product the catalog sells as a consumable was a trial started that never became an
    /// active trial, a conversion or a retention cohort.
    @Test func aTrialOnAProductTheCatalogDoesNotSellAsASubscriptionIsNoTrial() {
        var trial = F.transaction(
            "t0", "coins", from: Self.noon(1), to: Self.noon(8), price: 0, periodType: .trial, original: "o")
        trial.productKind = .autoRenewable
        let contribution = AnalyticsContribution.of(
            facts: [.transaction(trial)], environment: .production, catalog: F.catalog, rule: CommissionRule(),
            now: F.day(2026, 1, 16))
        var first = AnalyticsMeasures()
        first.newCustomers = 1
        #expect(
            contribution == [
                AnalyticsDailyKey(
                    day: CalendarDay(year: 2026, month: 1, day: 1), productId: "coins", subscriptionGroup: "",
                    storefront: "USA", currency: "USD"): first
            ])
    }
}
