import AppStoreModels
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion

/// The overview from the analytics module, in process: the cards are the body of
/// `GET …/analytics/overview` and the charts the points of `GET …/analytics/{metric}` for the
/// same app, environment, days and filters (`AnalyticsController.overview` and `.series`, so
/// the page and the API cannot disagree). Notifications per day come from the stored
/// notifications, which analytics does not count.
/// - Note: Immutable and `Sendable`.
struct AnalyticsOverviewSource: DashboardOverviewSource {
    let apps: AppDirectory
    let clock: ServerClock

    static let titles: [String: String] = [
        "active-subscriptions": "Active subscriptions", "active-trials": "Active trials", "mrr": "MRR",
        "revenue": "Revenue", "proceeds": "Proceeds", "new-customers": "New customers", "refunds": "Refunds",
    ]

    /// The analytics query of the page's query: its days, `from` … `to` − 1 day, both included.
    static func analyticsQuery(_ query: DashboardOverviewQuery) -> AnalyticsQuery {
        AnalyticsQuery(
            from: CalendarDay(containing: query.from),
            to: CalendarDay(containing: query.to.adding(milliseconds: -86_400_000)), resolution: .day,
            environment: query.environment,
            filter: AnalyticsFilter(
                productId: query.productId, storefront: query.storefront, subscriptionGroup: query.subscriptionGroup,
                store: query.store))
    }

    func overview(_ query: DashboardOverviewQuery) async throws -> DashboardOverview {
        let analytics = Self.analyticsQuery(query)
        let now = clock.now()
        let body = try await AnalyticsController.overview(appId: query.appId, query: analytics, apps: apps, now: now)
        let (series, _) = try await AnalyticsController.series(
            appId: query.appId, query: analytics, buckets: analytics.buckets, apps: apps, now: now, readsChurn: true)
        let notifications = try await apps.read { reader in
            try reader.notificationsByDay(
                appId: query.appId, environment: query.environment, from: query.from, to: query.to)
        }
        let currency = body["reportingCurrency"]?.stringValue
        let cards = (body["cards"]?.arrayValue ?? []).map { Self.card($0, currency: currency) }
        let labels = query.dayLabels
        var notes = [
            "Figures of the \(query.environment.rawValue) environment from the analytics aggregates "
                + "(docs/analytics.md); family-shared purchases count in no subscription or revenue figure."
        ]
        if let currency {
            notes.append("Money in \(currency), the reporting currency, converted at the purchase date.")
        } else {
            notes.append(
                "No reporting currency is set: money is shown per currency, without a change against the "
                    + "previous period.")
        }
        if query.productId != nil || query.storefront != nil || query.subscriptionGroup != nil {
            notes.append("Filtered by product, storefront or subscription group; notifications are not filtered.")
        }
        notes.append("Retention cohorts and LTV per customer are on the Cohorts page.")
        func points(_ metric: AnalyticsMetric) -> [JSONValue] { series.points(metric) }
        let active = points(.activeSubscriptions)
        let trials = points(.activeTrials)
        let refunds = points(.refunds)
        let conversion = points(.trialConversion)
        let churn = points(.churn)
        let movement = points(.mrrMovement)
        return DashboardOverview(
            cards: cards,
            charts: [
                SVGChart(
                    id: "chart-active", title: "Active subscriptions and trials", kind: .line, labels: labels,
                    series: [
                        .init(name: "Active subscriptions", values: active.map { Self.count($0, "count") }),
                        .init(name: "Active trials", values: trials.map { Self.count($0, "count") }),
                    ]),
                SVGChart(
                    id: "chart-mrr", title: "MRR", kind: .line, labels: labels,
                    series: Self.money(points(.mrr), [("gross", "MRR"), ("proceeds", "MRR proceeds")])),
                SVGChart(
                    id: "chart-mrr-movement", title: "MRR movement", kind: .bars, labels: labels,
                    series: Self.movement(movement)),
                SVGChart(
                    id: "chart-churn", title: "Churn by reason (paid subscriptions that ended)", kind: .bars,
                    labels: labels,
                    series: [
                        ("voluntary", "Voluntary"), ("involuntary", "Involuntary"),
                        ("productUnavailable", "Product unavailable"), ("other", "Other"),
                    ].map { field, label in
                        .init(
                            name: "Churned: " + label, values: churn.map { Self.count($0["byReason"] ?? .null, field) })
                    }),
                SVGChart(
                    id: "chart-revenue", title: "Revenue vs proceeds", kind: .bars, labels: labels,
                    series: Self.money(
                        points(.revenue), [("gross", "Revenue"), ("proceeds", "Proceeds"), ("refunded", "Refunded")])),
                SVGChart(
                    id: "chart-refunds", title: "Refunds by reason beside family revocations", kind: .bars,
                    labels: labels,
                    series: [
                        .init(
                            name: "Refunds: developer issue",
                            values: refunds.map { Self.count($0["byReason"] ?? .null, "developerIssue") }),
                        .init(
                            name: "Refunds: other", values: refunds.map { Self.count($0["byReason"] ?? .null, "other") }
                        ),
                        .init(name: "Family revocations", values: refunds.map { Self.count($0, "familyRevocations") }),
                    ]),
                SVGChart(
                    id: "chart-trial-conversion", title: "Trial conversion (trials started per day)", kind: .bars,
                    labels: labels,
                    series: ["started", "converted", "pending", "abandoned"].map { field in
                        .init(name: "Trials " + field, values: conversion.map { Self.count($0, field) })
                    }),
                SVGChart(
                    id: "chart-new-customers", title: "New customers per day", kind: .bars, labels: labels,
                    series: [
                        .init(name: "New customers", values: points(.newCustomers).map { Self.count($0, "count") })
                    ]
                ),
                SVGChart(
                    id: "chart-notifications", title: "Notifications received per day", kind: .line, labels: labels,
                    series: [.init(name: "Notifications", values: Self.values(notifications, query: query))]),
            ],
            notes: notes)
    }

    /// A card of the API's overview: counts as integers; money (milliunits) in the reporting
    /// currency with the previous period's, or, without one, per currency and no comparison.
    static func card(_ card: JSONValue, currency: String?) -> DashboardOverview.Card {
        let id = card["metric"]?.stringValue ?? ""
        let title = titles[id] ?? id
        guard let byCurrency = card["byCurrency"]?.arrayValue else {
            return DashboardOverview.Card(
                id: id, title: title, value: card["value"]?.integerValue.map(String.init),
                previous: card["previous"]?.integerValue.map(String.init), unavailable: nil)
        }
        if let currency {
            return DashboardOverview.Card(
                id: id, title: "\(title) (\(currency))", value: card["value"]?.integerValue.map(Self.amount),
                previous: card["previous"]?.integerValue.map(Self.amount), unavailable: nil)
        }
        let field = id == "proceeds" ? "proceeds" : "gross"
        let amounts = byCurrency.compactMap { entry -> String? in
            guard let code = entry["currency"]?.stringValue, let value = entry[field]?.integerValue else { return nil }
            return "\(amount(value)) \(code)"
        }
        return DashboardOverview.Card(
            id: id, title: title, value: amounts.isEmpty ? "0.00" : amounts.joined(separator: ", "), previous: nil,
            unavailable: nil)
    }

    /// Milliunits as a decimal: two places, three when the last is not 0 (`9990` → `9.99`).
    static func amount(_ milliunits: Int64) -> String {
        let sign = milliunits < 0 ? "-" : ""
        let magnitude = milliunits.magnitude
        let fraction = magnitude % 1000
        let decimals =
            fraction % 10 == 0 ? String(fraction / 10).leftPadded(to: 2) : String(fraction).leftPadded(to: 3)
        return "\(sign)\(magnitude / 1000).\(decimals)"
    }

    static func count(_ point: JSONValue, _ field: String) -> Double? {
        point[field]?.integerValue.map(Double.init)
    }

    /// Money series of `fields` (name, label), in units: the reporting currency's when the
    /// points have one, otherwise one series per currency and field.
    static func money(_ points: [JSONValue], _ fields: [(String, String)]) -> [SVGChart.Series] {
        if points.contains(where: { $0["reporting"]?.objectValue != nil }) {
            return fields.map { field, label in
                .init(name: label, values: points.map { Self.units($0["reporting"]?[field]?.integerValue) })
            }
        }
        let currencies = Set(
            points.flatMap { ($0["byCurrency"]?.arrayValue ?? []).compactMap { $0["currency"]?.stringValue } }
        ).sorted()
        return currencies.flatMap { code in
            fields.map { field, label in
                SVGChart.Series(
                    name: "\(label) \(code)",
                    values: points.map { point in
                        let entry = (point["byCurrency"]?.arrayValue ?? []).first {
                            $0["currency"]?.stringValue == code
                        }
                        return Self.units(entry?[field]?.integerValue ?? 0)
                    })
            }
        }
    }

    /// The MRR movement series (new, expansion, contraction, churned, reactivation) in units: the
    /// reporting currency's when the points have one, otherwise one series per currency.
    static func movement(_ points: [JSONValue]) -> [SVGChart.Series] {
        let fields = [
            ("new", "New"), ("expansion", "Expansion"), ("contraction", "Contraction"), ("churned", "Churned"),
            ("reactivation", "Reactivation"),
        ]
        return money(points, fields.map { ($0.0, "MRR " + $0.1.lowercased()) })
    }

    static func units(_ milliunits: Int64?) -> Double? { milliunits.map { Double($0) / 1000 } }

    /// One value per day of the period, 0 where nothing was counted.
    static func values(_ counts: [DailyCount], query: DashboardOverviewQuery) -> [Double?] {
        let first = query.from.millisecondsSince1970 / 86_400_000
        var values = [Double?](repeating: 0, count: query.days)
        for count in counts {
            let index = Int(count.day - first)
            if values.indices.contains(index) { values[index] = Double(count.count) }
        }
        return values
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}

extension JSONValue {
    /// Small readers of the analytics JSON (`nil` for another shape).
    fileprivate subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }
    fileprivate var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
    fileprivate var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
    fileprivate var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }
    fileprivate var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }
}
