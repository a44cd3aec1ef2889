import AppStoreModels
import Entitlements
import Foundation
import HTTPServer
import Storage

/// The analytics metrics that are cohort tables rather than time series (docs/analytics.md):
/// retention cohorts and realized LTV, read from `analytics_retention` / `analytics_ltv`.
enum AnalyticsCohortMetric: String, Sendable, CaseIterable {
    case retention
    case ltv
}

/// Builds the `cohorts` of a retention or LTV answer from the summed rows, and their CSV form.
/// - Note: Stateless; `Sendable`.
enum AnalyticsCohorts {
    /// The cohort months a query selects: the month containing `from` through the one containing
    /// `to` (first days).
    static func months(_ query: AnalyticsQuery) -> (from: CalendarDay, through: CalendarDay) {
        (
            CalendarDay(year: query.from.year, month: query.from.month, day: 1),
            CalendarDay(year: query.to.year, month: query.to.month, day: 1)
        )
    }

    /// The first day of the month after `month`'s.
    static func nextMonth(_ month: CalendarDay) -> CalendarDay {
        month.month == 12
            ? CalendarDay(year: month.year + 1, month: 1, day: 1)
            : CalendarDay(year: month.year, month: month.month + 1, day: 1)
    }

    /// Rate tables with more distinct `from` days than this are read a day at a time.
    static let maximumRateBoundaries = 64

    /// The days LTV rows are summed between before converting: every day a rate of the table
    /// starts (within a span every currency has one rate, so converting the span's sum at its
    /// last day's rate is converting each day at its own); none without a reporting currency
    /// (nothing to convert); `nil` (a sum per day) when the table has too many.
    static func rateBoundaries(_ table: ExchangeRateTable?) -> [CalendarDay]? {
        guard let table else { return [] }
        let days = Set(table.rates.map(\.from))
        return days.count > maximumRateBoundaries ? nil : days.sorted()
    }

    /// `"2026-01"`.
    static func label(_ month: CalendarDay) -> String { String(month.iso8601.prefix(7)) }

    /// Retention cohorts by month then product: `size`, and `stillPaying[k]` = the subscriptions
    /// with more than k paid renewals (as many entries as the cohort's longest run has renewals).
    static func retention(_ totals: [RetentionCohortTotal]) -> [JSONValue] {
        var order: [(CalendarDay, String)] = []
        var byCohort: [String: [(renewals: Int64, count: Int64)]] = [:]
        for total in totals {
            let name = "\(total.cohortMonth.daysSince1970)\u{0}\(total.productId)"
            if byCohort[name] == nil { order.append((total.cohortMonth, total.productId)) }
            byCohort[name, default: []].append((total.paidRenewals, total.subscriptions))
        }
        return order.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map { month, productId in
            let counts = byCohort["\(month.daysSince1970)\u{0}\(productId)"]!
            let longest = counts.map(\.renewals).max() ?? 0
            let stillPaying = (0..<max(0, longest)).map { k in
                counts.filter { $0.renewals > k }.reduce(Int64(0)) { $0 + $1.count }
            }
            return .object([
                "cohort": .string(label(month)), "productId": .string(productId),
                "size": .integer(counts.reduce(Int64(0)) { $0 + $1.count }),
                "stillPaying": .array(stillPaying.map { .integer($0) }),
            ])
        }
    }

    /// LTV cohorts by month: `customers`, per currency the net revenue per customer within each
    /// horizon, and the same in the reporting currency (each row converted at its purchase
    /// day's rate, then divided). A horizon is `null` until every customer of the cohort has
    /// had it: until the month after the cohort plus that many days has come.
    static func ltv(_ totals: [LTVCohortTotal], table: ExchangeRateTable?, now: Timestamp) -> [JSONValue] {
        var months: [CalendarDay] = []
        var byMonth: [CalendarDay: [LTVCohortTotal]] = [:]
        for total in totals {
            if byMonth[total.cohortMonth] == nil { months.append(total.cohortMonth) }
            byMonth[total.cohortMonth, default: []].append(total)
        }
        return months.sorted().compactMap { month in
            let rows = byMonth[month]!
            let customers = rows.reduce(Int64(0)) { $0 + $1.measures.customers }
            guard customers > 0 else { return nil }
            let reached = LTVMeasures.horizons.map { now >= nextMonth(month).adding(days: $0).start }
            func perCustomer(_ sum: Int64) -> Int64 {
                Money.scaledExactly(sum, by: 1, over: customers) ?? 0
            }
            func horizons(_ value: (Int64) -> Int64?) -> [String: JSONValue] {
                var fields: [String: JSONValue] = [:]
                for (index, horizon) in LTVMeasures.horizons.enumerated() {
                    fields["d\(horizon)"] = reached[index] ? (value(horizon).map { .integer($0) } ?? .null) : .null
                }
                return fields
            }
            var byCurrency: [String: LTVMeasures] = [:]
            for row in rows where !row.currency.isEmpty {
                byCurrency[row.currency] = (byCurrency[row.currency] ?? LTVMeasures()) + row.measures
            }
            let currencies: [JSONValue] = byCurrency.keys.sorted().map { currency in
                var fields = horizons { perCustomer(byCurrency[currency]!.revenue(within: $0)) }
                fields["currency"] = .string(currency)
                return .object(fields)
            }
            var reporting: JSONValue = .null
            if let table {
                var sums: [Int64: ReportingTotal] = [:]
                for horizon in LTVMeasures.horizons {
                    var sum = ReportingTotal(currency: table.reportingCurrency)
                    for row in rows where !row.currency.isEmpty && row.measures.revenue(within: horizon) != 0 {
                        sum.add(
                            row.measures.revenue(within: horizon), currency: row.currency, on: row.day, table: table)
                    }
                    sums[horizon] = sum
                }
                var fields = horizons { perCustomer(sums[$0]!.milliunits) }
                fields["currency"] = .string(table.reportingCurrency)
                let unconverted = Set(sums.values.flatMap(\.unconverted)).sorted()
                fields["unconverted"] = .array(unconverted.map { .string($0) })
                reporting = .object(fields)
            }
            return .object([
                "cohort": .string(label(month)), "customers": .integer(customers), "byCurrency": .array(currencies),
                "reporting": reporting,
            ])
        }
    }

    /// CSV of the cohorts: retention one row per cohort and product (`stillPaying.1` … the
    /// longest), LTV one row per cohort and currency (the reporting total as `reporting:<code>`),
    /// money in decimal units with three decimals, a horizon not reached empty.
    static func csv(metric: AnalyticsCohortMetric, cohorts: [JSONValue]) -> HTTPResponse {
        var lines: [[String]] = []
        switch metric {
        case .retention:
            var longest = 0
            for case .object(let cohort) in cohorts {
                if case .array(let paying)? = cohort["stillPaying"] { longest = max(longest, paying.count) }
            }
            lines.append(["cohort", "productId", "size"] + (0..<longest).map { "stillPaying.\($0 + 1)" })
            for case .object(let cohort) in cohorts {
                var line = [text(cohort["cohort"]), text(cohort["productId"]), text(cohort["size"])]
                var paying: [JSONValue] = []
                if case .array(let list)? = cohort["stillPaying"] { paying = list }
                line += (0..<longest).map { $0 < paying.count ? text(paying[$0]) : "" }
                lines.append(line)
            }
        case .ltv:
            lines.append(["cohort", "customers", "currency", "d7", "d30", "d90", "d365"])
            for case .object(let cohort) in cohorts {
                var entries: [(String, [String: JSONValue])] = []
                if case .array(let list)? = cohort["byCurrency"] {
                    for case .object(let entry) in list { entries.append((text(entry["currency"]), entry)) }
                }
                if case .object(let reporting)? = cohort["reporting"] {
                    entries.append(("reporting:" + text(reporting["currency"]), reporting))
                }
                for (currency, entry) in entries {
                    lines.append(
                        [text(cohort["cohort"]), text(cohort["customers"]), currency]
                            + LTVMeasures.horizons.map { horizon in
                                if case .integer(let value)? = entry["d\(horizon)"] {
                                    return AnalyticsCSV.decimal(value)
                                }
                                return ""
                            })
                }
            }
        }
        let output = lines.map { $0.map(quote).joined(separator: ",") + "\r\n" }.joined()
        var response = HTTPResponse(status: .ok, body: Data(output.utf8))
        response.headers["Content-Type"] = "text/csv; charset=utf-8"
        response.headers["Content-Disposition"] = "attachment; filename=\"\(metric.rawValue).csv\""
        return response
    }

    private static func text(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text)?: return text
        case .integer(let number)?: return String(number)
        default: return ""
        }
    }

    private static func quote(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
