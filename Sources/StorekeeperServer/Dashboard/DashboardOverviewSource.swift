import AppStoreModels
import Entitlements
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
    /// One store's figures; `nil`: both.
    var store: AnalyticsStore? = nil

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

/// Where the overview's figures come from: `AnalyticsOverviewSource` (the analytics module in
/// process) in the server; tests may pass another.
/// - Note: Implementations are `Sendable`.
protocol DashboardOverviewSource: Sendable {
    func overview(_ query: DashboardOverviewQuery) async throws -> DashboardOverview
}
