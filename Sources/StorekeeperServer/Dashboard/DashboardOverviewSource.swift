import AppStoreModels
import Foundation
import Storage

/// What the overview page asks for: one app, one environment, a period of whole UTC days
/// ending with today, and the filters of the analytics API (`docs/analytics.md`).
/// - Note: Immutable value; `Sendable`.
struct DashboardOverviewQuery: Sendable, Hashable {
    var appId: String
    var environment: AppStoreEnvironment
    /// Inclusive start (midnight UTC).
    var from: Timestamp
    /// Exclusive end (the midnight after today).
    var to: Timestamp
    var productId: String?
    var storefront: String?
    var subscriptionGroup: String?

    var days: Int { Int((to.millisecondsSince1970 - from.millisecondsSince1970) / 86_400_000) }

    /// The period of the same length just before this one (what each card compares with).
    var previous: DashboardOverviewQuery {
        var query = self
        let length = to.millisecondsSince1970 - from.millisecondsSince1970
        query.to = from
        query.from = from.adding(milliseconds: -length)
        return query
    }

    /// `yyyy-MM-dd` of each day of the period, in order.
    var dayLabels: [String] {
        let first = from.millisecondsSince1970 / 86_400_000
        return (0..<Int64(days)).map { Self.label(day: first + $0) }
    }

    static func label(day: Int64) -> String {
        String(Timestamp(millisecondsSince1970: day * 86_400_000).description.prefix(10))
    }
}

/// The overview's content: the headline cards (with the previous period's value) and the
/// charts, each a series per day.
/// - Note: Immutable value; `Sendable`.
struct DashboardOverview: Sendable, Hashable {
    struct Card: Sendable, Hashable {
        /// The analytics API's metric name (`docs/analytics.md`, overview cards), in its order.
        var id: String
        var title: String
        /// The figure as shown (counts as integers, money with its currency); `nil`: not available.
        var value: String?
        var previous: String?
        /// Why the card has no figure.
        var unavailable: String?
    }

    var cards: [Card]
    var charts: [SVGChart]
    /// What the figures leave out (filters a source cannot apply, figures it has not got).
    var notes: [String]
}

/// Where the overview's figures come from. The analytics API of issue 13 (another branch) is
/// meant to answer it; until then `StoredCountsOverview` answers what the stored rows give.
/// - Note: Implementations are `Sendable`.
protocol DashboardOverviewSource: Sendable {
    func overview(_ query: DashboardOverviewQuery) async throws -> DashboardOverview
}

/// The overview from what the store already counts: new customers (first seen per day) and
/// notifications received per day. The figures that need the analytics aggregates (active
/// subscriptions and trials, MRR, revenue and proceeds, refunds, churn, conversion, cohorts,
/// LTV) are shown as not available, with the reason.
/// - Note: Immutable and `Sendable`.
struct StoredCountsOverview: DashboardOverviewSource {
    let store: any Store

    static let pendingAnalytics = "needs the analytics API (issue 13), not in this build yet"

    static let pendingCards: [(String, String)] = [
        ("active-subscriptions", "Active subscriptions"), ("active-trials", "Active trials"), ("mrr", "MRR"),
        ("revenue", "Revenue"), ("proceeds", "Proceeds"), ("refunds", "Refunds"),
    ]

    func overview(_ query: DashboardOverviewQuery) async throws -> DashboardOverview {
        let previous = query.previous
        let (customers, earlierCustomers, notifications) = try await store.read { reader in
            (
                try reader.newCustomersByDay(appId: query.appId, from: query.from, to: query.to),
                try reader.newCustomersByDay(appId: query.appId, from: previous.from, to: previous.to),
                try reader.notificationsByDay(
                    appId: query.appId, environment: query.environment, from: query.from, to: query.to)
            )
        }
        let newCustomers = customers.reduce(0) { $0 + $1.count }
        let earlier = earlierCustomers.reduce(0) { $0 + $1.count }
        var cards = Self.pendingCards.map {
            DashboardOverview.Card(
                id: $0.0, title: $0.1, value: nil, previous: nil, unavailable: Self.pendingAnalytics)
        }
        cards.insert(
            DashboardOverview.Card(
                id: "new-customers", title: "New customers", value: String(newCustomers), previous: String(earlier),
                unavailable: nil),
            at: 5)
        let labels = query.dayLabels
        var notes = [
            "New customers count app user ids first seen in the period, in every environment (a customer is "
                + "not tied to one); notifications are those of the chosen environment."
        ]
        if query.productId != nil || query.storefront != nil || query.subscriptionGroup != nil {
            notes.append("The product, storefront and subscription group filters apply to the analytics figures.")
        }
        return DashboardOverview(
            cards: cards,
            charts: [
                SVGChart(
                    id: "chart-new-customers", title: "New customers per day", kind: .bars, labels: labels,
                    series: [.init(name: "New customers", values: Self.values(customers, query: query))]),
                SVGChart(
                    id: "chart-notifications", title: "Notifications received per day", kind: .line, labels: labels,
                    series: [.init(name: "Notifications", values: Self.values(notifications, query: query))]),
            ],
            notes: notes)
    }

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
