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
    case churn
    case mrrMovement = "mrr-movement"
}

/// Turns daily aggregate totals into the points of a metric (docs/analytics.md): sums over each
/// bucket's days, and figures at an instant (active counts, MRR) at the midnight that ends the
/// bucket, or at `now` for a bucket that midnight has not reached yet (the one containing now).
/// Money converts to the reporting currency per day (revenue at its purchase day, refunds at
/// their refund day, MRR at the day it is measured on).
/// - Note: Immutable value; `Sendable`.
struct AnalyticsSeries: Sendable {
    /// One bucket's figures per currency.
    struct Bucket: Sendable {
        var start: CalendarDay
        var end: CalendarDay
        /// Sums over the bucket's days.
        var sums: [String: AnalyticsMeasures] = [:]
        /// Running sums at the midnight that starts the bucket.
        var atStart: [String: AnalyticsMeasures] = [:]
        /// Instant figures (active counts and MRR in the `…Delta` fields) at `measuredAt`.
        var atEnd: [String: AnalyticsMeasures] = [:]
        /// The midnight after `end`, or now when that is later.
        var measuredAt: Timestamp
        /// MRR movement: sums over the days whose end has passed (to the last midnight), with
        /// the MRR at the midnights it moves between.
        var movement: [String: AnalyticsMeasures] = [:]
        var movementFrom: CalendarDay
        var movementTo: CalendarDay
        var mrrAtMovementFrom: [String: AnalyticsMeasures] = [:]
        var mrrAtMovementTo: [String: AnalyticsMeasures] = [:]
        /// Churn over `[start midnight, measuredAt]`.
        var churn: ChurnCounts
        /// Reporting-currency sums of the money fields, converted per day.
        var reporting: [String: ReportingTotal] = [:]
    }

    /// A bucket's churn: paid runs active at its start, the ones that ended by its end, the
    /// ones of those that paid again by then, and the others by reason.
    struct ChurnCounts: Sendable {
        var activeAtStart: Int64 = 0
        var expired: Int64 = 0
        var resubscribed: Int64 = 0
        var byReason: [ChurnReason: Int64] = [:]
        var churned: Int64 { expired - resubscribed }
    }

    var buckets: [Bucket]
    var table: ExchangeRateTable?

    /// - Parameters:
    ///   - before: totals per currency of every day before the first bucket.
    ///   - daily: totals per day and currency from the first bucket's start through the day after
    ///     the last bucket's end, in day order.
    ///   - now: the instant of the answer: no figure is measured after it.
    ///   - activeNow: the periods active at `now` (for a bucket measured at now).
    ///   - churnEnds: the ended runs of `churnWindows(buckets:now:)`, one per window, or none
    ///     when churn is not asked for.
    init(
        buckets ranges: [(start: CalendarDay, end: CalendarDay)], before: [AnalyticsDailyTotal],
        daily: [AnalyticsDailyTotal], table: ExchangeRateTable?, now: Timestamp = .init(millisecondsSince1970: .max),
        activeNow: [AnalyticsActiveTotal] = [], churnEnds: [AnalyticsChurnEnds] = []
    ) {
        self.table = table
        var initial: [String: AnalyticsMeasures] = [:]
        for total in before { initial[total.currency, default: AnalyticsMeasures()] = total.measures }
        // Running sums through each day that has rows: deltas dated `d` apply at the midnight
        // that starts `d`, so the sum through `d` is the figure at that midnight.
        var snapshots: [(day: CalendarDay, running: [String: AnalyticsMeasures])] = []
        var running = initial
        for total in daily {
            running[total.currency] = (running[total.currency] ?? AnalyticsMeasures()) + total.measures
            if snapshots.last?.day == total.day {
                snapshots[snapshots.count - 1].running = running
            } else {
                snapshots.append((total.day, running))
            }
        }
        func through(_ day: CalendarDay) -> [String: AnalyticsMeasures] {
            var low = 0
            var high = snapshots.count
            while low < high {
                let middle = (low + high) / 2
                if snapshots[middle].day <= day { low = middle + 1 } else { high = middle }
            }
            return low == 0 ? initial : snapshots[low - 1].running
        }
        var atNow: [String: AnalyticsMeasures] = [:]
        for total in activeNow {
            var measures = atNow[total.currency] ?? AnalyticsMeasures()
            switch total.activity {
            case .paid:
                measures.activePaidDelta += total.count
                measures.mrrGrossDelta += total.mrrGross
                measures.mrrProceedsDelta += total.mrrProceeds
            case .trial: measures.activeTrialDelta += total.count
            case .familyShared: measures.activeFamilyDelta += total.count
            }
            atNow[total.currency] = measures
        }
        // The last midnight at or before now: movement stops there.
        let today = CalendarDay(containing: now)
        var index = 0
        var buckets: [Bucket] = []
        for range in ranges {
            let endMidnight = range.end.adding(days: 1)
            let measuredAt = min(endMidnight.start, now)
            let movementTo = min(endMidnight, today)
            let movementFrom = min(range.start, movementTo)
            var bucket = Bucket(
                start: range.start, end: range.end, measuredAt: measuredAt, movementFrom: movementFrom,
                movementTo: movementTo, churn: ChurnCounts())
            while index < daily.count, daily[index].day <= range.end {
                let total = daily[index]
                if total.day >= range.start {
                    bucket.sums[total.currency] = (bucket.sums[total.currency] ?? AnalyticsMeasures()) + total.measures
                    if total.day < movementTo {
                        bucket.movement[total.currency] =
                            (bucket.movement[total.currency] ?? AnalyticsMeasures()) + total.measures
                    }
                    if let table, !total.currency.isEmpty {
                        Self.convert(total, into: &bucket.reporting, table: table)
                    }
                }
                index += 1
            }
            bucket.atStart = through(range.start)
            bucket.atEnd = measuredAt < endMidnight.start ? atNow : through(endMidnight)
            bucket.mrrAtMovementFrom = through(movementFrom)
            bucket.mrrAtMovementTo = through(movementTo)
            if range.start.start <= now {
                bucket.churn.activeAtStart = bucket.atStart.values.reduce(0) { $0 + $1.paidRunsActiveDelta }
                if buckets.count < churnEnds.count {
                    let ends = churnEnds[buckets.count]
                    bucket.churn.expired = ends.expired
                    bucket.churn.resubscribed = ends.resubscribed
                    for (reason, count) in ends.byReason {
                        bucket.churn.byReason[reason ?? .other, default: 0] += count
                    }
                }
            }
            buckets.append(bucket)
        }
        self.buckets = buckets
    }

    /// Churn's windows: one per bucket that has started by `now`, from its first midnight to its
    /// end or `now` (never a scheduled end), in bucket order.
    static func churnWindows(buckets: [(start: CalendarDay, end: CalendarDay)], now: Timestamp)
        -> [AnalyticsChurnWindow]
    {
        buckets.prefix { $0.start.start <= now }.map { range in
            AnalyticsChurnWindow(from: range.start.start, through: min(range.end.adding(days: 1).start, now))
        }
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
                        let instant = CalendarDay(containing: bucket.measuredAt)
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
                point["partial"] = .integer(sums.refundsPartial)
                point["refundRate"] = Self.ratio(sums.refunds, sums.transactions)
                point["familyRevocations"] = .integer(sums.familyRevocations)
                point["reversals"] = .integer(sums.refundReversals)
                point["consumptionRequests"] = .object([
                    "count": .integer(sums.consumptionRequests),
                    "granted": .integer(sums.consumptionRequestsGranted),
                    "declined": .integer(sums.consumptionRequestsDeclined),
                    "noOutcome": .integer(
                        sums.consumptionRequests - sums.consumptionRequestsGranted - sums.consumptionRequestsDeclined),
                ])
            case .familyRevocations:
                point["count"] = .integer(sums.familyRevocations)
            case .churn:
                let churn = bucket.churn
                point["activeAtStart"] = .integer(churn.activeAtStart)
                point["expired"] = .integer(churn.expired)
                point["resubscribed"] = .integer(churn.resubscribed)
                point["churned"] = .integer(churn.churned)
                point["churnRate"] = Self.ratio(churn.churned, churn.activeAtStart)
                point["byReason"] = .object([
                    "voluntary": .integer(churn.byReason[.voluntary] ?? 0),
                    "involuntary": .integer(churn.byReason[.involuntary] ?? 0),
                    "productUnavailable": .integer(churn.byReason[.productUnavailable] ?? 0),
                    "other": .integer(churn.byReason[.other] ?? 0),
                ])
            case .mrrMovement:
                point["movementFrom"] = .string(bucket.movementFrom.iso8601)
                point["movementTo"] = .string(bucket.movementTo.iso8601)
                point["byCurrency"] = .array(movementFigures(bucket).map { figure in .object(figure.json) })
                point["reporting"] = movementReporting(bucket)
            }
            return .object(point)
        }
    }

    /// One currency's MRR movement in a bucket.
    struct MovementFigure {
        var currency: String
        var start: Int64
        var end: Int64
        var movement: AnalyticsMeasures

        var json: [String: JSONValue] {
            [
                "currency": .string(currency), "start": .integer(start), "end": .integer(end),
                "new": .integer(movement.mrrNew), "expansion": .integer(movement.mrrExpansion),
                "contraction": .integer(movement.mrrContraction), "churned": .integer(movement.mrrChurned),
                "reactivation": .integer(movement.mrrReactivation),
            ]
        }
    }

    func movementFigures(_ bucket: Bucket) -> [MovementFigure] {
        let currencies = Set(bucket.mrrAtMovementFrom.keys).union(bucket.mrrAtMovementTo.keys).union(
            bucket.movement.keys
        ).filter { !$0.isEmpty }
        return currencies.sorted().compactMap { currency in
            let figure = MovementFigure(
                currency: currency, start: bucket.mrrAtMovementFrom[currency]?.mrrGrossDelta ?? 0,
                end: bucket.mrrAtMovementTo[currency]?.mrrGrossDelta ?? 0,
                movement: bucket.movement[currency] ?? AnalyticsMeasures())
            let m = figure.movement
            let moved = [m.mrrNew, m.mrrExpansion, m.mrrContraction, m.mrrChurned, m.mrrReactivation]
            return figure.start == 0 && figure.end == 0 && moved.allSatisfy({ $0 == 0 }) ? nil : figure
        }
    }

    /// The movement in the reporting currency: every figure of every currency converted at the
    /// rate of the day the movement ends on, each rounded on its own.
    private func movementReporting(_ bucket: Bucket) -> JSONValue {
        guard let table else { return .null }
        let names = ["start", "end", "new", "expansion", "contraction", "churned", "reactivation"]
        var totals = Dictionary(
            uniqueKeysWithValues: names.map { ($0, ReportingTotal(currency: table.reportingCurrency)) })
        for figure in movementFigures(bucket) {
            for name in names {
                guard case .integer(let amount)? = figure.json[name], amount != 0 else { continue }
                totals[name]!.add(amount, currency: figure.currency, on: bucket.movementTo, table: table)
            }
        }
        var object: [String: JSONValue] = ["currency": .string(table.reportingCurrency)]
        for name in names { object[name] = .integer(totals[name]!.milliunits) }
        object["unconverted"] = .array(Set(totals.values.flatMap(\.unconverted)).sorted().map { .string($0) })
        return .object(object)
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
