import AppStoreModels
import Testing

@testable import Entitlements

/// Apple's commission on hand-computed histories: the one-year rule with lapses, trials and
/// extensions, the Small Business Program, storefront rates.
@Suite struct CommissionRuleTests {
    typealias F = AnalyticsFixture
    let calculator = ProceedsCalculator(rule: CommissionRule(), catalog: F.catalog)

    /// A yearly 49.99 USD from 2025-01-01 (365 paid days) bought again `lapseDays` after it
    /// ended on 2026-01-01.
    func yearlyAgain(afterLapseOf lapseDays: Int64) -> [TransactionProceeds] {
        let second = F.day(2026, 1, 1).adding(milliseconds: lapseDays * F.dayMilliseconds)
        return calculator.proceeds(of: [
            F.transaction("t1", "yearly", from: F.day(2025, 1, 1), to: F.day(2026, 1, 1), price: 49990),
            F.transaction(
                "t2", "yearly", from: second, to: second.adding(milliseconds: 365 * F.dayMilliseconds),
                price: 49990),
        ])
    }

    @Test func aYearThenA45DayLapseKeepsTheReducedRate() {
        let result = yearlyAgain(afterLapseOf: 45)
        #expect(result.map(\.proceeds) == [34993, 42492])
        #expect(result[1].commission == .init(basisPoints: 1500, reason: .oneYearOfPaidService))
        #expect(result[1].purchaseDate == F.day(2026, 2, 15))
    }

    @Test func aYearThenA75DayLapseRestartsTheCount() {
        let result = yearlyAgain(afterLapseOf: 75)
        #expect(result[1].purchaseDate == F.day(2026, 3, 17))
        #expect(result.map(\.proceeds) == [34993, 34993])
        #expect(result[1].commission == .init(basisPoints: 3000, reason: .standard))
    }

    @Test func aLapseOfExactly60DaysKeepsTheCountAnd61DoNot() {
        #expect(yearlyAgain(afterLapseOf: 60)[1].commission.basisPoints == 1500)
        #expect(yearlyAgain(afterLapseOf: 61)[1].commission.basisPoints == 3000)
    }

    @Test func monthlyRenewalsReachTheReducedRateAfter365Days() {
        var transactions: [TransactionFact] = []
        var start = F.day(2025, 1, 1)
        for index in 0..<14 {
            let end = CivilCalendar.adding(months: 1, to: start)
            transactions.append(F.transaction("m\(index)", "monthly", from: start, to: end, price: 9990))
            start = end
        }
        let result = calculator.proceeds(of: transactions)
        // 2025-12-01 has 334 paid days behind it, 2026-01-01 has 365.
        #expect(result[11].purchaseDate == F.day(2025, 12, 1))
        #expect(result[11].proceeds == 6993)
        #expect(result[12].purchaseDate == F.day(2026, 1, 1))
        #expect(result[12].proceeds == 8492)
        #expect(result[13].proceeds == 8492)
        let accrued = PaidServiceAccrual.accruedBefore(transactions, catalog: F.catalog)
        #expect(accrued["m11"] == 334 * F.dayMilliseconds)
        #expect(accrued["m12"] == 365 * F.dayMilliseconds)
    }

    @Test func aFreeTrialAndARenewalDateExtensionAccrueNothing() {
        let trialEnd = F.day(2025, 1, 8)
        // The paid year was extended by 30 days (Apple re-signs it with a later expiry).
        let extendedEnd = F.day(2026, 2, 7)
        let transactions = [
            F.transaction("trial", "yearly", from: F.day(2025, 1, 1), to: trialEnd, price: 0, periodType: .trial),
            F.transaction("paid", "yearly", from: trialEnd, to: extendedEnd, price: 49990),
            F.transaction("renewal", "yearly", from: extendedEnd, to: F.day(2027, 2, 7), price: 49990),
        ]
        let accrued = PaidServiceAccrual.accruedBefore(transactions, catalog: F.catalog)
        #expect(accrued["trial"] == nil)
        #expect(accrued["paid"] == 0)
        #expect(accrued["renewal"] == 365 * F.dayMilliseconds)
        let result = calculator.proceeds(of: transactions)
        #expect(result.map(\.proceeds) == [0, 34993, 42492])
        #expect(result[0].commission.reason == .nothingPaid)
    }

    @Test func aFullRefundAccruesNoPaidService() {
        let transactions = [
            F.transaction(
                "t1", "yearly", from: F.day(2025, 1, 1), to: F.day(2026, 1, 1), price: 49990,
                revokedAt: F.day(2025, 1, 3), revocationType: .refundFull),
            F.transaction("t2", "yearly", from: F.day(2026, 1, 1), to: F.day(2027, 1, 1), price: 49990),
        ]
        #expect(PaidServiceAccrual.accruedBefore(transactions, catalog: F.catalog)["t2"] == 0)
        #expect(calculator.proceeds(of: transactions)[1].proceeds == 34993)
    }

    @Test func aSmallBusinessProgramPeriodReducesTheRateOnItsDaysOnly() {
        let program = SmallBusinessProgramPeriod(
            from: CalendarDay(year: 2025, month: 1, day: 1), to: CalendarDay(year: 2025, month: 6, day: 30))
        let smallBusiness = ProceedsCalculator(
            rule: CommissionRule(smallBusinessProgram: [program]), catalog: F.catalog)
        let result = smallBusiness.proceeds(of: [
            F.transaction("t1", "monthly", from: F.day(2025, 6, 30), to: F.day(2025, 7, 30), price: 9990),
            F.transaction("t2", "monthly", from: F.day(2025, 7, 30), to: F.day(2025, 8, 30), price: 9990),
        ])
        #expect(result.map(\.proceeds) == [8492, 6993])
        #expect(result.map(\.commission.reason) == [.smallBusinessProgram, .standard])
        #expect(program.contains(CalendarDay(year: 2024, month: 12, day: 31)) == false)
        #expect(
            SmallBusinessProgramPeriod(from: CalendarDay(year: 2025, month: 1, day: 1), to: nil)
                .contains(CalendarDay(year: 2030, month: 1, day: 1)))
    }

    @Test func storefrontRatesOverrideTheDefault() {
        let rule = CommissionRule(ratesByStorefront: ["KOR": CommissionRates(standard: 2600, reduced: 1300)])
        let result = ProceedsCalculator(rule: rule, catalog: F.catalog).proceeds(of: [
            F.transaction(
                "kor", "coins", from: F.day(2026, 1, 1), to: nil, price: 9900, currency: "KRW",
                storefront: "KOR", original: "kor"),
            F.transaction("usa", "coins", from: F.day(2026, 1, 2), to: nil, price: 9900, original: "usa"),
        ])
        #expect(result.map(\.proceeds) == [7326, 6930])
        #expect(result[0].commission == .init(basisPoints: 2600, reason: .standard))
        #expect(CommissionRates(standard: 3000, reduced: 3100).isValid == false)
        #expect(CommissionRates(standard: 10_001, reduced: 0).isValid == false)
        #expect(CommissionRates.apple.isValid)
    }

    @Test func theLatestSignedVersionOfATransactionCounts() {
        let first = F.transaction("t1", "coins", from: F.day(2026, 1, 1), to: nil, price: 990)
        let refunded = F.transaction(
            "t1", "coins", from: F.day(2026, 1, 1), to: nil, price: 990, signedDate: F.day(2026, 1, 5),
            revokedAt: F.day(2026, 1, 5), revocationType: .refundFull, revocationReason: 1)
        for order in [[first, refunded], [refunded, first]] {
            let result = calculator.proceeds(of: order)
            #expect(result.count == 1)
            #expect(result[0].refunded == 990)
            #expect(result[0].refundReason == .developerIssue)
        }
    }
}
