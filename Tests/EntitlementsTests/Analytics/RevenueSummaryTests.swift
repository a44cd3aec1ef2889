import AppStoreModels
import Testing

@testable import Entitlements

/// Revenue, refunds and family sharing by period: the worked examples of docs/analytics.md.
@Suite struct RevenueSummaryTests {
    typealias F = AnalyticsFixture
    let calculator = ProceedsCalculator(rule: CommissionRule(), catalog: F.catalog)
    let january = (F.day(2026, 1, 1), F.day(2026, 2, 1))
    let february = (F.day(2026, 2, 1), F.day(2026, 3, 1))

    @Test func aRefundAfterThePeriodClosedChangesThatPeriodAndIsReportedOnItsDate() {
        let purchase = F.transaction("t1", "monthly", from: F.day(2026, 1, 20), to: F.day(2026, 2, 20), price: 9990)
        var refunded = purchase
        refunded.signedDate = F.day(2026, 2, 5)
        refunded.revocationDate = F.day(2026, 2, 5)
        refunded.revocationType = .refundFull
        refunded.revocationReason = 0

        let before = RevenueSummary.summaries(of: calculator.proceeds(of: [purchase]), from: january.0, to: january.1)
        #expect(before.count == 1)
        #expect([before[0].gross, before[0].proceeds, before[0].refunded, before[0].net] == [9990, 6993, 0, 9990])

        let facts = calculator.proceeds(of: [purchase, refunded])
        let jan = RevenueSummary.summaries(of: facts, from: january.0, to: january.1)
        #expect(jan.count == 1)
        #expect(jan[0].transactions == 1)
        #expect(
            [jan[0].gross, jan[0].refunded, jan[0].net, jan[0].proceeds, jan[0].netProceeds] == [
                9990, 9990, 0, 6993, 0,
            ])
        #expect(jan[0].refundedOnDate == 0)
        let feb = RevenueSummary.summaries(of: facts, from: february.0, to: february.1)
        #expect(feb.count == 1)
        #expect([feb[0].gross, feb[0].refunded, Int64(feb[0].transactions), feb[0].refundedOnDate] == [0, 0, 0, 9990])
    }

    @Test func aProratedRefundTakesBackItsShare() {
        let result = calculator.proceeds(of: [
            F.transaction(
                "t1", "monthly", from: F.day(2026, 1, 1), to: F.day(2026, 2, 1), price: 9990,
                revokedAt: F.day(2026, 1, 16), revocationType: .refundProrated, revocationPercentage: 50000)
        ])
        #expect(result[0].refunded == 4995)
        #expect(result[0].refundedProceeds == 3497)  // 6993 / 2 = 3496.5
    }

    @Test func familySharingCountsInNoRevenueAndIsReportedApart() {
        let owner = F.transaction("o", "monthly", from: F.day(2026, 1, 3), to: F.day(2026, 2, 3), price: 9990)
        let members = ["f1", "f2"].map {
            F.transaction(
                $0, "monthly", from: F.day(2026, 1, 3), to: F.day(2026, 2, 3), price: 9990,
                ownership: .familyShared, original: "orig-\($0)")
        }
        let facts = calculator.proceeds(of: [owner] + members)
        let jan = RevenueSummary.summaries(of: facts, from: january.0, to: january.1)
        #expect(jan.map(\.gross) == [9990])
        #expect(jan.map(\.transactions) == [1])
        #expect(facts.filter(\.isFamilyShared).map(\.gross) == [0, 0])
        let at = F.day(2026, 1, 10)
        let activities = ([owner] + members).compactMap { SubscriptionActivity.of($0, at: at, catalog: F.catalog) }
        #expect(activities == [.paid, .familyShared, .familyShared])
    }

    @Test func refundsByReasonWithTheRefundRateAndFamilyRevocationsApart() {
        let march = (F.day(2026, 3, 1), F.day(2026, 4, 1))
        var transactions = (0..<38).map {
            F.transaction("p\($0)", "coins", from: F.day(2026, 3, 2), to: nil, price: 990, original: "p\($0)")
        }
        transactions.append(
            F.transaction(
                "dev", "monthly", from: F.day(2026, 3, 3), to: F.day(2026, 4, 3), price: 9990, original: "dev",
                revokedAt: F.day(2026, 3, 6), revocationType: .refundFull, revocationReason: 1))
        transactions.append(
            F.transaction(
                "oth", "coins", from: F.day(2026, 3, 4), to: nil, price: 4990, original: "oth",
                revokedAt: F.day(2026, 3, 7), revocationType: .refundFull, revocationReason: 0))
        // Refunded in March, bought in February: counts in March's refunds, not its rate's denominator.
        transactions.append(
            F.transaction(
                "feb", "coins", from: F.day(2026, 2, 20), to: nil, price: 990, currency: "EUR", original: "feb",
                revokedAt: F.day(2026, 3, 8), revocationType: .refundFull))
        transactions.append(
            F.transaction(
                "fam", "monthly", from: F.day(2026, 3, 1), to: F.day(2026, 4, 1), price: 9990,
                ownership: .familyShared, original: "fam", revokedAt: F.day(2026, 3, 9),
                revocationType: .familyRevoke))
        let summary = RefundSummary(
            of: calculator.proceeds(of: transactions), familyRevocationDates: [F.day(2026, 3, 9)], from: march.0,
            to: march.1)
        #expect(summary.count == 3)
        #expect(summary.developerIssue == 1)
        #expect(summary.other == 2)
        #expect(
            summary.amounts == [
                .init(currency: "EUR", developerIssue: 0, other: 990),
                .init(currency: "USD", developerIssue: 9990, other: 4990),
            ])
        #expect(summary.amounts[1].total == 14980)
        #expect(summary.paidTransactions == 40)
        #expect(summary.refundRate.tenThousandths == 750)
        #expect(summary.familyRevocations == 1)
    }

    @Test func newCustomersCountAliasesOnce() {
        let purchases: [(customer: String, purchaseDate: Timestamp)] = [
            ("X", F.day(2026, 1, 3)), ("X", F.day(2026, 1, 20)), ("Y", F.day(2026, 1, 15)),
            ("Z", F.day(2026, 2, 1)), ("X", F.day(2026, 2, 2)),
        ]
        #expect(NewCustomerCount.count(purchases: purchases, from: january.0, to: january.1) == 2)
        #expect(NewCustomerCount.count(purchases: purchases, from: february.0, to: february.1) == 1)
    }
}
