import AppStoreModels
import Entitlements
import Foundation
import HTTPServer
import StorekeeperIngestion

/// The overview page: the headline cards with their change against the previous period, the
/// charts, a period selector, the analytics filters, and a CSV download of what is shown.
extension DashboardController {
    /// The periods the selector offers, in days (28 is the issue's default).
    static let periods = [7, 28, 90, 365]

    /// The query a request asks for: `period` days ending today (UTC), the environment
    /// (default: the app's), and the filters, each bounded.
    func overviewQuery(_ request: HTTPRequest, app: AppRuntime) throws -> DashboardOverviewQuery {
        let days = Int(request.queryValue("period") ?? "28") ?? 0
        guard Self.periods.contains(days) else {
            throw DashboardFailure(status: .badRequest, message: "period must be one of 7, 28, 90 or 365 days.")
        }
        func filter(_ name: String) throws -> String? {
            guard let value = request.queryValue(name)?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
                return nil
            }
            // The analytics API's bound, so the page takes what the API takes.
            let limit = AnalyticsQuery.maximumFilterLength
            guard value.utf8.count <= limit, !value.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw DashboardFailure(
                    status: .badRequest, message: "\(name) must be 1 to \(limit) printable characters.")
            }
            return value
        }
        var store: AnalyticsStore?
        if let text = try filter("store") {
            guard let parsed = AnalyticsStore(rawValue: text) else {
                throw DashboardFailure(status: .badRequest, message: "store must be appStore or googlePlay.")
            }
            store = parsed
        }
        let today = clock.now().millisecondsSince1970 / 86_400_000
        let end = Timestamp(millisecondsSince1970: (today + 1) * 86_400_000)
        return DashboardOverviewQuery(
            appId: app.id, environment: try Self.environment(request, app: app),
            from: end.adding(milliseconds: -Int64(days) * 86_400_000), to: end, productId: try filter("productId"),
            storefront: try filter("storefront"), subscriptionGroup: try filter("subscriptionGroup"), store: store)
    }

    @Sendable func overview(_ request: HTTPRequest, _ session: DashboardSession, _ app: AppRuntime) async throws
        -> HTTPResponse
    {
        let query = try overviewQuery(request, app: app)
        let overview = try await overviewSource.overview(query)
        let rebuild = try await latestRebuild(appId: app.id)
        let note = Self.rebuildNote(
            rebuild, appId: app.id,
            refresh: Self.refreshTarget("/dashboard/apps/" + DashboardHTTP.encode(app.id), request))
        return DashboardHTTP.page(
            Self.overviewPage(
                overview, query: query, app: app, rebuildNote: note,
                context: context(session, appId: app.id, section: .overview)))
    }

    @Sendable func overviewCSV(_ request: HTTPRequest, _ session: DashboardSession, _ app: AppRuntime) async throws
        -> HTTPResponse
    {
        let query = try overviewQuery(request, app: app)
        let overview = try await overviewSource.overview(query)
        var response = HTTPResponse(status: .ok, body: Data(Self.csv(overview).utf8))
        response.headers["Content-Type"] = "text/csv; charset=utf-8"
        response.headers["Content-Disposition"] =
            "attachment; filename=\"overview-\(DashboardHTTP.encode(app.id))-\(query.days)d.csv\""
        DashboardHTTP.secure(&response)
        return response
    }

    /// `chart,series,label,value` rows, one per point, then `card,<id>,current|previous,value`.
    /// Cells that could start a spreadsheet formula are quoted with a leading `'`.
    static func csv(_ overview: DashboardOverview) -> String {
        var lines = ["kind,name,series,label,value"]
        for card in overview.cards {
            lines.append(["card", card.id, "current", "", card.value ?? ""].map(csvCell).joined(separator: ","))
            lines.append(["card", card.id, "previous", "", card.previous ?? ""].map(csvCell).joined(separator: ","))
        }
        for chart in overview.charts {
            for series in chart.series {
                for (index, label) in chart.labels.enumerated() {
                    let value = index < series.values.count ? series.values[index].map(SVGChart.number) ?? "" : ""
                    lines.append(["chart", chart.id, series.name, label, value].map(csvCell).joined(separator: ","))
                }
            }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func csvCell(_ text: String) -> String {
        var cell = text
        if let first = cell.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first),
            Double(cell) == nil
        {
            cell = "'" + cell
        }
        guard cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return cell }
        return "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    // MARK: Rendering

    static func overviewPage(
        _ overview: DashboardOverview, query: DashboardOverviewQuery, app: AppRuntime, rebuildNote: HTML = "",
        context: DashboardPageContext
    ) -> HTML {
        let base = "/dashboard/apps/" + DashboardHTTP.encode(app.id)
        let cards = overview.cards.map { card -> HTML in
            guard let value = card.value else {
                return """
                    <li class="card" id="card-\(card.id)"><span class="label">\(card.title)</span>\
                    <span class="value muted">—</span><span class="change">\(card.unavailable ?? "")</span></li>
                    """
            }
            return """
                <li class="card" id="card-\(card.id)"><span class="label">\(card.title)</span> \
                <span class="value">\(value)</span> <span class="change">\(change(value, card.previous))</span></li>
                """
        }
        let periods = Self.periods.map { days -> HTML in
            days == query.days
                ? "<option value=\"\(days)\" selected>Last \(days) days</option>"
                : "<option value=\"\(days)\">Last \(days) days</option>"
        }
        let stores = [("", "Both stores"), ("appStore", "App Store"), ("googlePlay", "Google Play")].map {
            value, label -> HTML in
            value == (query.store?.rawValue ?? "")
                ? "<option value=\"\(value)\" selected>\(label)</option>"
                : "<option value=\"\(value)\">\(label)</option>"
        }
        let environments = app.record.environments.map { option -> HTML in
            option == query.environment
                ? "<option selected>\(option.rawValue)</option>" : "<option>\(option.rawValue)</option>"
        }
        let csvLink = DashboardHTTP.link(
            base + "/overview.csv",
            [
                ("period", String(query.days)), ("environment", query.environment.rawValue),
                ("productId", query.productId), ("storefront", query.storefront),
                ("subscriptionGroup", query.subscriptionGroup), ("store", query.store?.rawValue),
            ])
        let notes = overview.notes.map { note -> HTML in "<li>\(note)</li>" }
        return DashboardPages.layout(
            title: "Overview", context: context,
            body: """
                <h1>Overview</h1>\(rebuildNote)
                <form class="filters" method="get" action="\(base)">\
                <label for="period">Period<select id="period" name="period">\(periods)</select></label>\
                <label for="environment">Environment<select id="environment" name="environment">\(environments)\
                </select></label>\
                <label for="store">Store<select id="store" name="store">\(stores)</select></label>\
                <label for="productId">Product id<input id="productId" name="productId" maxlength="200" \
                value="\(query.productId)"></label>\
                <label for="storefront">Storefront<input id="storefront" name="storefront" maxlength="200" \
                value="\(query.storefront)"></label>\
                <label for="subscriptionGroup">Subscription group<input id="subscriptionGroup" \
                name="subscriptionGroup" maxlength="200" value="\(query.subscriptionGroup)"></label>\
                <button type="submit">Apply</button></form>
                <p><a id="csv" href="\(csvLink)" download>Download CSV</a> \
                <span class="muted">\(query.dayLabels.first) to \(query.dayLabels.last), UTC; \
                compared with the \(query.days) days before</span></p>
                <ul class="cards" id="cards">\(cards)</ul>
                <div class="charts">\(overview.charts.map { $0.render() })</div>
                <ul class="muted">\(notes)</ul>
                """)
    }

    /// `+3 (+60%) vs 5` for counts; the previous value alone for what is not a plain number.
    static func change(_ value: String, _ previous: String?) -> String {
        guard let previous else { return "" }
        guard let current = Double(value), let earlier = Double(previous) else { return "previous period: \(previous)" }
        let difference = current - earlier
        let sign = difference > 0 ? "+" : ""
        let percent =
            earlier == 0 ? "" : " (\(sign)\(SVGChart.number((difference / earlier * 100 * 10).rounded() / 10))%)"
        return "\(sign)\(SVGChart.number(difference))\(percent) vs \(previous)"
    }
}
