import AppStoreModels
import Testing

@testable import Entitlements

/// Conversion to a reporting currency with the operator's rate table; a missing rate is said.
@Suite struct ExchangeRateTableTests {
    let table = ExchangeRateTable(
        reportingCurrency: "USD",
        rates: [
            ExchangeRate(currency: "EUR", from: CalendarDay(year: 2026, month: 2, day: 1), micros: 1_100_000),
            ExchangeRate(currency: "EUR", from: CalendarDay(year: 2026, month: 1, day: 1), micros: 1_084_200),
        ])

    @Test func convertsAtTheRateInForceOnThePurchaseDay() {
        #expect(table.convert(8990, currency: "EUR", on: CalendarDay(year: 2026, month: 1, day: 10)) == 9747)
        #expect(table.convert(8990, currency: "EUR", on: CalendarDay(year: 2026, month: 1, day: 31)) == 9747)
        #expect(table.convert(8990, currency: "EUR", on: CalendarDay(year: 2026, month: 2, day: 1)) == 9889)
        #expect(table.convert(8990, currency: "EUR", on: CalendarDay(year: 2025, month: 12, day: 31)) == nil)
        #expect(table.convert(-8990, currency: "EUR", on: CalendarDay(year: 2026, month: 1, day: 10)) == -9747)
        #expect(table.convert(9990, currency: "USD", on: CalendarDay(year: 2020, month: 1, day: 1)) == 9990)
    }

    @Test func aMissingRateIsListedNeverGuessed() {
        var total = ReportingTotal(currency: "USD")
        let day = CalendarDay(year: 2026, month: 1, day: 10)
        total.add(8990, currency: "EUR", on: day, table: table)
        total.add(1_200_000, currency: "JPY", on: day, table: table)
        total.add(9990, currency: "USD", on: day, table: table)
        total.add(500, currency: "GBP", on: day, table: table)
        total.add(700, currency: "JPY", on: day, table: table)
        #expect(total.milliunits == 19737)
        #expect(total.unconverted == ["GBP", "JPY"])
    }

    @Test func ratesParseAsExactDecimals() {
        #expect(ExchangeRate.micros(decimal: "1.0842") == 1_084_200)
        #expect(ExchangeRate.micros(decimal: "0.006512") == 6512)
        #expect(ExchangeRate.micros(decimal: "150") == 150_000_000)
        for bad in ["", "1.", ".5", "1.1234567", "-1", "0", "0.000000", "1e3", "1,5", "١.٥", "1234567890"] {
            #expect(ExchangeRate.micros(decimal: bad) == nil, "\(bad)")
        }
        #expect(
            ExchangeRate(currency: "EUR", from: CalendarDay(year: 2026, month: 1, day: 1), micros: 1_084_200).decimal
                == "1.084200")
    }

    @Test func daysParseStrictly() {
        #expect(CalendarDay(iso8601: "2026-02-28")?.iso8601 == "2026-02-28")
        #expect(CalendarDay(iso8601: "2024-02-29")?.daysSince1970 == 19782)
        for bad in ["2026-02-29", "2026-13-01", "2026-1-01", "2026-01-01T00:00:00Z", "1969-12-31", "20260101"] {
            #expect(CalendarDay(iso8601: bad) == nil, "\(bad)")
        }
        #expect(CalendarDay(containing: Timestamp(millisecondsSince1970: 1_767_225_599_999)).iso8601 == "2025-12-31")
    }
}
