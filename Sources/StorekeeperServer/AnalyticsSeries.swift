import AppStoreModels
import Entitlements
import Storage

/// The analytics metrics the API serves from the daily aggregates.
enum AnalyticsMetric: String, Sendable, CaseIterable {
    case activeSubscriptions = "active-subscriptions"
    case activeTrials = "active-trials"
    case mrr
    case revenue
    case newCustomers = "new-customers"
    case trialConversion = "trial-conversion"
    case refunds
    case familyRevocations = "family-revocations"
}

/// Turns daily aggregate totals into the points of a metric (docs/analytics.md): sums over each
/// bucket's days, and running sums (active counts, MRR) at the midnight that ends the bucket.
/// Money converts to the reporting currency per day (revenue at its purchase day, refunds at
/// their refund day, MRR at the bucket's end).
/// - Note: Immutable value; `Sendable`.
struct AnalyticsSeries: Sendable {
    /// One bucket's figures per currency.
    struct Bucket: Sendable {
        var start: CalendarDay
        var end: CalendarDay
        /// Sums over the bucket's days.
        var sums: [String: AnalyticsMeasures] = [:]
        /// Running sums at the midnight after `end`.
        var atEnd: [String: AnalyticsMeasures] = [:]
        /// Reporting-currency sums of the money fields, converted per day.
        var reporting: [String: ReportingTotal] = [:]
    }

    var buckets: [Bucket]
    var table: ExchangeRateTable?

    /// - Parameters:
    ///   - before: totals per currency of every day before the first bucket.
    ///   - daily: totals per day and currency from the first bucket's start through the day after
    ///     the last bucket's end, in day order.
    init(
        buckets ranges: [(start: CalendarDay, end: CalendarDay)], before: [AnalyticsDailyTotal],
        daily: [AnalyticsDailyTotal], table: ExchangeRateTable?
    ) {
        self.table = table
        var running: [String: AnalyticsMeasures] = [:]
        for total in before { running[total.currency, default: AnalyticsMeasures()] = total.measures }
        var index = 0
        var buckets: [Bucket] = []
        for range in ranges {
            var bucket = Bucket(start: range.start, end: range.end)
            while index < daily.count, daily[index].day <= range.end {
                let total = daily[index]
                running[total.currency] = (running[total.currency] ?? AnalyticsMeasures()) + total.measures
                if total.day >= range.start {
                    bucket.sums[total.currency] = (bucket.sums[total.currency] ?? AnalyticsMeasures()) + total.measures
                    if let table, !total.currency.isEmpty {
                        Self.convert(total, into: &bucket.reporting, table: table)
                    }
                }
                index += 1
            }
            var atEnd = running
            var peek = index
            while peek < daily.count, daily[peek].day == range.end.adding(days: 1) {
                atEnd[daily[peek].currency] =
                    (atEnd[daily[peek].currency] ?? AnalyticsMeasures()) + daily[peek].measures
                peek += 1
            }
            bucket.atEnd = atEnd
            buckets.append(bucket)
        }
        self.buckets = buckets
    }

    /// The money fields converted to the reporting currency, by name.
    static let revenueFields = [
        "gross", "proceeds", "refunded", "refundedProceeds", "refundedOnDate", "refundedOnDateDeveloperIssue",
    ]

    static func amount(_ name: String, of measures: AnalyticsMeasures) -> Int64 {
        switch name {
        case "gross": return measures.gross
        case "proceeds": return measures.proceeds
        case "refunded": return measures.refunded
        case "refundedProceeds": return measures.refundedProceeds
        case "refundedOnDate": return measures.refundedOnDate
        default: return measures.refundedOnDateDeveloperIssue
        }
    }

    static func convert(
        _ total: AnalyticsDailyTotal, into sums: inout [String: ReportingTotal], table: ExchangeRateTable
    ) {
        for name in revenueFields {
            let value = Self.amount(name, of: total.measures)
            guard value != 0 else { continue }
            var sum = sums[name] ?? ReportingTotal(currency: table.reportingCurrency)
            sum.add(value, currency: total.currency, on: total.day, table: table)
            sums[name] = sum
        }
    }

    /// The JSON points of `metric`.
    func points(_ metric: AnalyticsMetric) -> [JSONValue] {
        buckets.map { bucket in
            var point: [String: JSONValue] = [
                "period": .string(bucket.start.iso8601), "periodEnd": .string(bucket.end.iso8601),
            ]
            let sums = bucket.sums.values.reduce(AnalyticsMeasures(), +)
            let atEnd = bucket.atEnd.values.reduce(AnalyticsMeasures(), +)
            switch metric {
            case .activeSubscriptions:
                point["count"] = .integer(atEnd.activePaidDelta)
                point["familyShared"] = .integer(atEnd.activeFamilyDelta)
            case .activeTrials:
                point["count"] = .integer(atEnd.activeTrialDelta)
                point["familyShared"] = .integer(atEnd.activeFamilyDelta)
            case .mrr:
                let currencies = bucket.atEnd.filter {
                    !$0.key.isEmpty && ($0.value.mrrGrossDelta != 0 || $0.value.mrrProceedsDelta != 0)
                }
                point["byCurrency"] = .array(
                    currencies.keys.sorted().map { currency in
                        let measures = currencies[currency]!
                        return .object([
                            "currency": .string(currency), "gross": .integer(measures.mrrGrossDelta),
                            "proceeds": .integer(measures.mrrProceedsDelta),
                        ])
                    })
                point["reporting"] =
                    table.map { table in
                        var gross = ReportingTotal(currency: table.reportingCurrency)
                        var proceeds = ReportingTotal(currency: table.reportingCurrency)
                        let instant = bucket.end.adding(days: 1)
                        for currency in currencies.keys.sorted() {
                            gross.add(
                                currencies[currency]!.mrrGrossDelta, currency: currency, on: instant, table: table)
                            proceeds.add(
                                currencies[currency]!.mrrProceedsDelta, currency: currency, on: instant, table: table)
                        }
                        return .object([
                            "currency": .string(table.reportingCurrency), "gross": .integer(gross.milliunits),
                            "proceeds": .integer(proceeds.milliunits),
                            "unconverted": .array(
                                (Set(gross.unconverted).union(proceeds.unconverted)).sorted().map { .string($0) }),
                        ])
                    } ?? .null
            case .revenue:
                point["byCurrency"] = .array(
                    bucket.sums.keys.sorted().filter { !$0.isEmpty }.compactMap { currency in
                        let m = bucket.sums[currency]!
                        guard m.transactions != 0 || m.refundedOnDate != 0 || m.refunded != 0 else { return nil }
                        return .object([
                            "currency": .string(currency), "gross": .integer(m.gross), "proceeds": .integer(m.proceeds),
                            "refunded": .integer(m.refunded), "refundedProceeds": .integer(m.refundedProceeds),
                            "net": .integer(m.gross - m.refunded),
                            "netProceeds": .integer(m.proceeds - m.refundedProceeds),
                            "transactions": .integer(m.transactions), "refundedOnDate": .integer(m.refundedOnDate),
                        ])
                    })
                point["reporting"] = reporting(bucket) { get in
                    [
                        "gross": .integer(get("gross")), "proceeds": .integer(get("proceeds")),
                        "refunded": .integer(get("refunded")), "refundedProceeds": .integer(get("refundedProceeds")),
                        "net": .integer(get("gross") - get("refunded")),
                        "netProceeds": .integer(get("proceeds") - get("refundedProceeds")),
                        "refundedOnDate": .integer(get("refundedOnDate")),
                    ]
                }
            case .newCustomers:
                point["count"] = .integer(sums.newCustomers)
            case .trialConversion:
                point["started"] = .integer(sums.trialsStarted)
                point["converted"] = .integer(sums.trialsConverted)
                point["pending"] = .integer(sums.trialsPending)
                point["abandoned"] = .integer(sums.trialsAbandoned)
                point["conversionRate"] = Self.ratio(sums.trialsConverted, sums.trialsStarted)
            case .refunds:
                point["count"] = .integer(sums.refunds)
                point["byReason"] = .object([
                    "developerIssue": .integer(sums.refundsDeveloperIssue),
                    "other": .integer(sums.refunds - sums.refundsDeveloperIssue),
                ])
                point["byCurrency"] = .array(
                    bucket.sums.keys.sorted().filter { !$0.isEmpty && bucket.sums[$0]!.refundedOnDate != 0 }.map {
                        let m = bucket.sums[$0]!
                        return .object([
                            "currency": .string($0), "amount": .integer(m.refundedOnDate),
                            "developerIssue": .integer(m.refundedOnDateDeveloperIssue),
                            "other": .integer(m.refundedOnDate - m.refundedOnDateDeveloperIssue),
                        ])
                    })
                point["reporting"] = reporting(bucket) { get in
                    [
                        "amount": .integer(get("refundedOnDate")),
                        "developerIssue": .integer(get("refundedOnDateDeveloperIssue")),
                        "other": .integer(get("refundedOnDate") - get("refundedOnDateDeveloperIssue")),
                    ]
                }
                point["refundRate"] = Self.ratio(sums.refunds, sums.transactions)
                point["familyRevocations"] = .integer(sums.familyRevocations)
            case .familyRevocations:
                point["count"] = .integer(sums.familyRevocations)
            }
            return .object(point)
        }
    }

    private func reporting(_ bucket: Bucket, _ fields: ((String) -> Int64) -> [String: JSONValue]) -> JSONValue {
        guard let table else { return .null }
        var object = fields { bucket.reporting[$0]?.milliunits ?? 0 }
        object["currency"] = .string(table.reportingCurrency)
        let unconverted = Set(bucket.reporting.values.flatMap(\.unconverted))
        object["unconverted"] = .array(unconverted.sorted().map { .string($0) })
        return .object(object)
    }

    static func ratio(_ numerator: Int64, _ denominator: Int64) -> JSONValue {
        Ratio(numerator: Int(numerator), denominator: Int(denominator)).decimal.map { .number($0) } ?? .null
    }
}
