import AppStoreModels
import Entitlements
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion

/// The cohorts page: the retention cohort table and realized LTV (chart and table), from the
/// analytics API's own computation in process (`AnalyticsController.cohorts`), so the page and
/// `GET …/analytics/retention|ltv` show the same numbers. Exact values sit in `data-value`
/// attributes beside what is shown.
extension DashboardController {
    /// The spans of cohort months the selector offers (12 is the default).
    static let cohortMonths = [6, 12, 24]

    /// The analytics query of a cohorts request: `months` cohort months ending with this one,
    /// the environment (default: the app's) and the filters, bounded as on the overview.
    func cohortsQuery(_ request: HTTPRequest, app: AppRuntime) throws -> (AnalyticsQuery, months: Int) {
        let months = Int(request.queryValue("months") ?? "12") ?? 0
        guard Self.cohortMonths.contains(months) else {
            throw DashboardFailure(status: .badRequest, message: "months must be one of 6, 12 or 24.")
        }
        let overview = try overviewQuery(request, app: app)
        let today = CalendarDay(containing: clock.now())
        let index = today.year * 12 + today.month - 1 - (months - 1)
        let query = AnalyticsQuery(
            from: CalendarDay(year: index / 12, month: index % 12 + 1, day: 1), to: today, resolution: .month,
            environment: overview.environment,
            filter: AnalyticsFilter(
                productId: overview.productId, storefront: overview.storefront,
                subscriptionGroup: overview.subscriptionGroup))
        return (query, months)
    }

    @Sendable func cohorts(_ request: HTTPRequest, _ session: DashboardSession, _ app: AppRuntime) async throws
        -> HTTPResponse
    {
        let (query, months) = try cohortsQuery(request, app: app)
        let now = clock.now()
        let (retention, _) = try await AnalyticsController.cohorts(
            .retention, appId: app.id, query: query, apps: apps, now: now)
        let (ltv, settings) = try await AnalyticsController.cohorts(
            .ltv, appId: app.id, query: query, apps: apps, now: now)
        let rebuild = try await latestRebuild(appId: app.id)
        let note = Self.rebuildNote(
            rebuild, appId: app.id,
            refresh: Self.refreshTarget("/dashboard/apps/" + DashboardHTTP.encode(app.id) + "/cohorts", request))
        return DashboardHTTP.page(
            Self.cohortsPage(
                retention: retention, ltv: ltv, reportingCurrency: settings.reportingCurrency, query: query,
                months: months, app: app, rebuildNote: note,
                context: context(session, appId: app.id, section: .cohorts)))
    }

    static func cohortsPage(
        retention: [JSONValue], ltv: [JSONValue], reportingCurrency: String?, query: AnalyticsQuery, months: Int,
        app: AppRuntime, rebuildNote: HTML = "", context: DashboardPageContext
    ) -> HTML {
        let base = "/dashboard/apps/" + DashboardHTTP.encode(app.id)
        let spans = Self.cohortMonths.map { count -> HTML in
            count == months
                ? "<option value=\"\(count)\" selected>Last \(count) months</option>"
                : "<option value=\"\(count)\">Last \(count) months</option>"
        }
        let environments = app.record.environments.map { option -> HTML in
            option == query.environment
                ? "<option selected>\(option.rawValue)</option>" : "<option>\(option.rawValue)</option>"
        }
        return DashboardPages.layout(
            title: "Cohorts", context: context,
            body: """
                <h1>Cohorts</h1>\(rebuildNote)
                <form class="filters" method="get" action="\(base)/cohorts">\
                <label for="months">Cohorts<select id="months" name="months">\(spans)</select></label>\
                <label for="environment">Environment<select id="environment" name="environment">\(environments)\
                </select></label>\
                <label for="productId">Product id<input id="productId" name="productId" maxlength="200" \
                value="\(query.filter.productId)"></label>\
                <label for="storefront">Storefront<input id="storefront" name="storefront" maxlength="200" \
                value="\(query.filter.storefront)"></label>\
                <label for="subscriptionGroup">Subscription group<input id="subscriptionGroup" \
                name="subscriptionGroup" maxlength="200" value="\(query.filter.subscriptionGroup)"></label>\
                <button type="submit">Apply</button></form>
                <p class="muted" id="cohort-range" data-from="\(query.from.iso8601)" data-to="\(query.to.iso8601)">\
                Cohort months \(AnalyticsCohorts.label(AnalyticsCohorts.months(query).from)) to \
                \(AnalyticsCohorts.label(AnalyticsCohorts.months(query).through)), UTC.</p>
                <h2 id="retention-heading">Retention</h2>
                <p class="muted">Subscriptions by the month of their first full-price payment and product; each \
                column is how many paid that renewal (and the share of the cohort).</p>
                \(retentionTable(retention))
                <h2 id="ltv-heading">Realized LTV per customer</h2>
                <p class="muted">Net revenue per customer first seen in the month, within 7, 30, 90 and 365 days \
                of each one's first purchase; — until every customer of the cohort has had that long.</p>
                \(ltvChart(ltv, reportingCurrency: reportingCurrency))
                \(ltvTable(ltv))
                """)
    }

    static func retentionTable(_ cohorts: [JSONValue]) -> HTML {
        var longest = 0
        for case .object(let cohort) in cohorts {
            if case .array(let paying)? = cohort["stillPaying"] { longest = max(longest, paying.count) }
        }
        guard !cohorts.isEmpty else { return "<p id=\"retention-empty\">No cohort in these months.</p>" }
        let head = (0..<longest).map { period -> HTML in "<th scope=\"col\">Renewal \(period + 1)</th>" }
        let rows = cohorts.compactMap { value -> HTML? in
            guard case .object(let cohort) = value else { return nil }
            let size = integer(cohort["size"]) ?? 0
            var paying: [JSONValue] = []
            if case .array(let list)? = cohort["stillPaying"] { paying = list }
            let cells = (0..<longest).map { period -> HTML in
                guard period < paying.count, let count = integer(paying[period]) else { return "<td></td>" }
                let share = size > 0 ? SVGChart.number(Double(count) / Double(size) * 100) + "%" : ""
                return "<td data-value=\"\(count)\">\(count) <span class=\"muted\">\(share)</span></td>"
            }
            return """
                <tr><th scope="row">\(text(cohort["cohort"]))</th><td>\(text(cohort["productId"]))</td>\
                <td data-value="\(size)">\(size)</td>\(cells)</tr>
                """
        }
        return """
            <div class="scroll"><table id="retention" aria-labelledby="retention-heading"><thead><tr>\
            <th scope="col">Cohort</th><th scope="col">Product</th><th scope="col">Size</th>\(head)</tr></thead>\
            <tbody>\(rows)</tbody></table></div>
            """
    }

    /// The LTV per horizon of each cohort in the reporting currency (or the first currency
    /// when the app has none), in currency units.
    static func ltvChart(_ cohorts: [JSONValue], reportingCurrency: String?) -> HTML {
        guard !cohorts.isEmpty else { return "" }
        var labels: [String] = []
        var values: [[Double?]] = Array(repeating: [], count: LTVMeasures.horizons.count)
        var currency = reportingCurrency
        for case .object(let cohort) in cohorts {
            labels.append(text(cohort["cohort"]))
            var figures: [String: JSONValue] = [:]
            if reportingCurrency != nil, case .object(let reporting)? = cohort["reporting"] {
                figures = reporting
            } else if case .array(let list)? = cohort["byCurrency"], case .object(let first)? = list.first {
                figures = first
                currency = currency ?? text(first["currency"])
            }
            for (index, horizon) in LTVMeasures.horizons.enumerated() {
                values[index].append(integer(figures["d\(horizon)"]).map { Double($0) / 1000 })
            }
        }
        let chart = SVGChart(
            id: "chart-ltv", title: "Realized LTV per customer (\(currency ?? "no currency"))", kind: .bars,
            labels: labels,
            series: LTVMeasures.horizons.enumerated().map { index, horizon in
                SVGChart.Series(name: "\(horizon) days", values: values[index])
            })
        return chart.render()
    }

    static func ltvTable(_ cohorts: [JSONValue]) -> HTML {
        guard !cohorts.isEmpty else { return "<p id=\"ltv-empty\">No customer first seen in these months.</p>" }
        var rows: [HTML] = []
        for case .object(let cohort) in cohorts {
            var entries: [(String, [String: JSONValue])] = []
            if case .array(let list)? = cohort["byCurrency"] {
                for case .object(let entry) in list { entries.append((text(entry["currency"]), entry)) }
            }
            if case .object(let reporting)? = cohort["reporting"] {
                entries.append(("reporting:" + text(reporting["currency"]), reporting))
            }
            if entries.isEmpty { entries.append(("", [:])) }
            for (currency, entry) in entries {
                let cells = LTVMeasures.horizons.map { horizon -> HTML in
                    guard let value = integer(entry["d\(horizon)"]) else { return "<td data-value=\"\">—</td>" }
                    return "<td data-value=\"\(value)\">\(AnalyticsCSV.decimal(value))</td>"
                }
                let customers = integer(cohort["customers"]) ?? 0
                rows.append(
                    """
                    <tr><th scope="row">\(text(cohort["cohort"]))</th><td data-value="\(customers)">\(customers)</td>\
                    <td>\(currency)</td>\(cells)</tr>
                    """)
            }
        }
        return """
            <div class="scroll"><table id="ltv" aria-labelledby="ltv-heading"><thead><tr><th scope="col">Cohort</th>\
            <th scope="col">Customers</th><th scope="col">Currency</th><th scope="col">7 days</th>\
            <th scope="col">30 days</th><th scope="col">90 days</th><th scope="col">365 days</th></tr></thead>\
            <tbody>\(rows)</tbody></table></div>
            """
    }

    private static func integer(_ value: JSONValue?) -> Int64? {
        if case .integer(let number)? = value { return number }
        return nil
    }

    private static func text(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text)?: return text
        case .integer(let number)?: return String(number)
        default: return ""
        }
    }
}
