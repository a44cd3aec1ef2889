import AppStoreModels
import Entitlements
import HTTPServer
import Storage

/// The parameters of an analytics request, parsed and bounded (docs/analytics.md): a bad one
/// is 400 `invalid_analytics_query` naming it.
/// - Note: Immutable value; `Sendable`.
struct AnalyticsQuery: Sendable, Equatable {
    enum Resolution: String, Sendable, CaseIterable { case day, week, month, quarter, year }
    enum Format: String, Sendable { case json, csv }

    static let defaultDays: Int64 = 28
    static let maximumDays: Int64 = 3660
    static let maximumFilterLength = 200

    var from: CalendarDay
    var to: CalendarDay
    var resolution: Resolution
    var environment: AppStoreEnvironment
    var filter: AnalyticsFilter
    var format: Format

    /// A query built in process (the dashboard's overview), already bounded by its caller.
    init(
        from: CalendarDay, to: CalendarDay, resolution: Resolution, environment: AppStoreEnvironment,
        filter: AnalyticsFilter
    ) {
        self.from = from
        self.to = to
        self.resolution = resolution
        self.environment = environment
        self.filter = filter
        self.format = .json
    }

    /// A query as a request gives it. `series`: the route answers a series and reads
    /// `resolution` and `format`; the overview does not declare them, so it neither reads nor
    /// refuses them (`day`, `json`), as any parameter a route does not take.
    init(_ request: HTTPRequest, today: CalendarDay, series: Bool = true) throws {
        func invalid(_ name: String, _ rule: String) -> HTTPError {
            HTTPError.badRequest("\(name) \(rule).", code: "invalid_analytics_query")
        }
        func day(_ name: String) throws -> CalendarDay? {
            guard let text = request.queryValue(name) else { return nil }
            guard let day = CalendarDay(iso8601: text) else { throw invalid(name, "must be a day as YYYY-MM-DD") }
            return day
        }
        let to = try day("to") ?? today
        let from = try day("from") ?? to.adding(days: -(Self.defaultDays - 1))
        guard from <= to else { throw invalid("from", "must not be after to") }
        guard to.daysSince1970 - from.daysSince1970 < Self.maximumDays else {
            throw invalid("from", "must be at most \(Self.maximumDays) days before to")
        }
        self.from = from
        self.to = to
        let resolution = series ? request.queryValue("resolution") ?? "day" : "day"
        guard let parsed = Resolution(rawValue: resolution) else {
            throw invalid("resolution", "must be day, week, month, quarter or year")
        }
        self.resolution = parsed
        switch request.queryValue("environment") ?? "Production" {
        case "Production": environment = .production
        case "Sandbox": environment = .sandbox
        default: throw invalid("environment", "must be Production or Sandbox")
        }
        var filter = AnalyticsFilter()
        for name in ["productId", "storefront", "subscriptionGroup"] {
            guard let value = request.queryValue(name) else { continue }
            // No control character: none is in an id, and a NUL cannot even be bound (the store
            // would refuse it as unstorable).
            guard !value.isEmpty, value.utf8.count <= Self.maximumFilterLength,
                !RequestBody.holdsControlCharacter(value)
            else {
                throw invalid(name, "must be 1 to \(Self.maximumFilterLength) bytes without control characters")
            }
            switch name {
            case "productId": filter.productId = value
            case "storefront": filter.storefront = value
            default: filter.subscriptionGroup = value
            }
        }
        if let store = request.queryValue("store") {
            guard let parsed = AnalyticsStore(rawValue: store) else {
                throw invalid("store", "must be appStore or googlePlay (absent: both)")
            }
            filter.store = parsed
        }
        self.filter = filter
        guard let format = Format(rawValue: series ? request.queryValue("format") ?? "json" : "json") else {
            throw invalid("format", "must be json or csv")
        }
        self.format = format
    }

    /// The buckets of `[from, to]` at `resolution`: first and last day of each, the first and
    /// last clipped to the range. Weeks start on Monday (ISO 8601).
    var buckets: [(start: CalendarDay, end: CalendarDay)] {
        var result: [(start: CalendarDay, end: CalendarDay)] = []
        var start = from
        while start <= to {
            let next: CalendarDay
            switch resolution {
            case .day: next = start.adding(days: 1)
            case .week:
                // 1970-01-01 was a Thursday: Monday is day number ≡ 4 (mod 7).
                let weekday = ((start.daysSince1970 - 4) % 7 + 7) % 7
                next = start.adding(days: 7 - weekday)
            case .month, .quarter, .year:
                let months = resolution == .month ? 1 : (resolution == .quarter ? 3 : 12)
                let firstMonth = resolution == .month ? start.month : ((start.month - 1) / months) * months + 1
                var year = start.year
                var month = firstMonth + months
                if month > 12 {
                    month -= 12
                    year += 1
                }
                next = CalendarDay(year: year, month: month, day: 1)
            }
            let end = min(next.adding(days: -1), to)
            result.append((start, end))
            start = next
        }
        return result
    }
}
