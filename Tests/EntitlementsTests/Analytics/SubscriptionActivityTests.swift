import AppStoreModels
import Testing

@testable import Entitlements

/// Active subscriptions and trials at an instant: the worked example of docs/analytics.md.
@Suite struct SubscriptionActivityTests {
    typealias F = AnalyticsFixture

    @Test func theWorkedExample() {
        let at = F.day(2026, 3, 10)
        func activity(_ transaction: TransactionFact, grace: Timestamp? = nil) -> SubscriptionActivity? {
            SubscriptionActivity.of(transaction, at: at, gracePeriodEnd: grace, catalog: F.catalog)
        }
        let a = F.transaction("a", "monthly", from: F.day(2026, 3, 1), to: F.day(2026, 4, 1), price: 9990)
        let b = F.transaction(
            "b", "weekly", from: F.day(2026, 3, 5), to: F.day(2026, 3, 12), price: 0, periodType: .trial)
        let c = F.transaction("c", "monthly", from: F.day(2026, 2, 1), to: F.day(2026, 3, 1), price: 9990)
        let d = F.transaction(
            "d", "monthly", from: F.day(2026, 3, 2), to: F.day(2026, 4, 2), price: 9990, revokedAt: F.day(2026, 3, 5),
            revocationType: .refundFull)
        let e = F.transaction(
            "e", "monthly", from: F.day(2026, 3, 1), to: F.day(2026, 4, 1), price: 9990, ownership: .familyShared)
        #expect(activity(a) == .paid)
        #expect(activity(b) == .trial)
        #expect(activity(c, grace: F.day(2026, 3, 16)) == .paid)
        #expect(activity(c) == nil)
        #expect(activity(d) == nil)
        #expect(activity(e) == .familyShared)
    }

    @Test func aProratedRefundCountsUntilItsRevocationAndAConsumableNever() {
        let prorated = F.transaction(
            "p", "monthly", from: F.day(2026, 3, 1), to: F.day(2026, 4, 1), price: 9990,
            revokedAt: F.day(2026, 3, 15), revocationType: .refundProrated, revocationPercentage: 50000)
        #expect(SubscriptionActivity.of(prorated, at: F.day(2026, 3, 14), catalog: F.catalog) == .paid)
        #expect(SubscriptionActivity.of(prorated, at: F.day(2026, 3, 15), catalog: F.catalog) == nil)
        let coins = F.transaction("c", "coins", from: F.day(2026, 3, 1), to: F.day(2026, 4, 1), price: 990)
        #expect(SubscriptionActivity.of(coins, at: F.day(2026, 3, 2), catalog: F.catalog) == nil)
        let paidIntro = F.transaction(
            "i", "monthly", from: F.day(2026, 3, 1), to: F.day(2026, 4, 1), price: 990, periodType: .intro)
        #expect(SubscriptionActivity.of(paidIntro, at: F.day(2026, 3, 2), catalog: F.catalog) == .paid)
    }
}
