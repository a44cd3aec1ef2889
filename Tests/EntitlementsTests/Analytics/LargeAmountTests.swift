import Testing

@testable import Entitlements

/// Money arithmetic at the edges of 64 bits: an operator's exchange rate multiplies amounts by
/// millions, and Swift traps on overflow, which took the whole server down (review finding:
/// USD 600,000 of MRR reported in IDR).
@Suite struct LargeAmountTests {
    @Test func scalingUsesA128BitIntermediateAndRoundsHalfAwayFromZero() {
        #expect(Money.scaledExactly(600_000_000, by: 16_000_000_000, over: 1_000_000) == 9_600_000_000_000)
        #expect(Money.scaledExactly(5, by: 1, over: 2) == 3)
        #expect(Money.scaledExactly(-5, by: 1, over: 2) == -3)
        #expect(Money.scaledExactly(5, by: -1, over: 2) == -3)
        #expect(Money.scaledExactly(Int64.max, by: 1_000_000, over: 1_000_000) == Int64.max)
        #expect(Money.scaledExactly(Int64.min, by: 1, over: 1) == Int64.min)
        #expect(Money.scaledExactly(Int64.min, by: -1, over: 1) == nil)
        #expect(Money.scaledExactly(Int64.max, by: 2, over: 1) == nil)
        #expect(Money.scaledExactly(0, by: Int64.max, over: 7) == 0)
        // The engine's own scaling saturates instead of trapping.
        #expect(Money(milliunits: Int64.max, currency: "USD").scaled(by: 4, over: 1).milliunits == Int64.max)
        #expect(Money(milliunits: Int64.min, currency: "USD").scaled(by: 4, over: 1).milliunits == Int64.min)
    }

    @Test func aLargeMRRConvertsToAWeakReportingCurrency() {
        let table = ExchangeRateTable(
            reportingCurrency: "IDR",
            rates: [
                ExchangeRate(currency: "USD", from: CalendarDay(year: 2026, month: 1, day: 1), micros: 16_000_000_000)
            ])
        let day = CalendarDay(year: 2026, month: 6, day: 1)
        #expect(table.convert(600_000_000, currency: "USD", on: day) == 9_600_000_000_000)
        var total = ReportingTotal(currency: "IDR")
        total.add(600_000_000, currency: "USD", on: day, table: table)
        #expect(total.milliunits == 9_600_000_000_000)
        #expect(total.unconverted == [])
    }

    @Test func whatCannotBeRepresentedIsListedAsUnconverted() {
        let table = ExchangeRateTable(
            reportingCurrency: "USD",
            rates: [
                ExchangeRate(
                    currency: "XAU", from: CalendarDay(year: 2026, month: 1, day: 1),
                    micros: ExchangeRate.micros(decimal: "999999999.999999")!)
            ])
        let day = CalendarDay(year: 2026, month: 6, day: 1)
        #expect(table.convert(10_000_000_000_000, currency: "XAU", on: day) == nil)
        var total = ReportingTotal(currency: "USD")
        total.add(10_000_000_000_000, currency: "XAU", on: day, table: table)
        total.add(5_000_000_000_000_000_000, currency: "USD", on: day, table: table)
        total.add(5_000_000_000_000_000_000, currency: "USD", on: day, table: table)
        total.add(1000, currency: "XAU", on: day, table: table)
        #expect(total.milliunits == 5_000_000_000_000_000_000 + 1_000_000_000_000)
        #expect(total.unconverted == ["USD", "XAU"])
    }

    @Test func ratiosOfLargeFiguresDoNotTrap() {
        #expect(Ratio(numerator: 1_000_000_000_000_000, denominator: 3).tenThousandths == 3_333_333_333_333_333_333)
        #expect(Ratio(numerator: -1_000_000_000_000_000, denominator: 3).tenThousandths == -3_333_333_333_333_333_333)
        #expect(Ratio(numerator: Int.max / 10, denominator: 1).tenThousandths == nil)
        #expect(Ratio(numerator: 1, denominator: Int.min).tenThousandths == nil)
        #expect(Ratio(numerator: 1, denominator: 8).tenThousandths == 1250)
        #expect(Ratio(numerator: -1, denominator: 3).tenThousandths == -3333)
    }
}
