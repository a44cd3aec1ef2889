import AppStoreModels
import Entitlements
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion

/// The analytics API (docs/analytics.md): a metric as a time series, the overview cards, and
/// the app's analytics settings. Figures come from the daily aggregates the ingestion keeps
/// (`AnalyticsAggregation`), so a request reads at most a few rows per day and currency.
/// - Note: Immutable and `Sendable`.
struct AnalyticsController: Sendable {
    let apps: AppDirectory
    let clock: ServerClock

    static let metricQuery = [
        "from", "to", "resolution", "environment", "productId", "storefront", "subscriptionGroup", "format", "store",
    ]

    var routes: [APIRoute] {
        let errors: [Int: String?] = [400: "Error", 401: "Error", 403: "Error", 404: "Error", 503: "Error"]
        return [
            APIRoute(
                .get, "/v1/apps/{appId}/analytics/overview", access: .appSecret, operationId: "getAnalyticsOverview",
                summary: "Headline figures of a period (28 days by default) with their change against the period "
                    + "before.", tag: "analytics", responses: errors.merging([200: "AnalyticsOverview"]) { $1 },
                query: ["from", "to", "environment", "productId", "storefront", "subscriptionGroup", "store"],
                handler: overview),
            APIRoute(
                .get, "/v1/apps/{appId}/analytics/{metric}", access: .appSecret, operationId: "getAnalyticsMetric",
                summary: "One metric as a time series (JSON, or CSV with format=csv).", tag: "analytics",
                responses: errors.merging([200: "AnalyticsSeries"]) { $1 }, query: Self.metricQuery, handler: metric),
            APIRoute(
                .get, "/v1/apps/{appId}/analytics-settings", access: .admin, operationId: "getAnalyticsSettings",
                summary: "Reporting currency and rates, Small Business Program periods, commission rates.",
                tag: "admin", responses: errors.merging([200: "AnalyticsSettings"]) { $1 }, handler: getSettings
            ).versioned(ifMatch: false, etagStatuses: [200]),
            Self.withLocation(
                APIRoute(
                    .put, "/v1/apps/{appId}/analytics-settings", access: .admin, operationId: "putAnalyticsSettings",
                    summary: "Replace the analytics settings. A change of the commission terms queues a rebuild of "
                        + "the aggregates (202, Location: its status); otherwise 200.",
                    tag: "admin", request: "AnalyticsSettings",
                    responses: errors.merging([
                        200: "AnalyticsSettings", 202: "AnalyticsSettings", 412: "Error", 415: "Error",
                    ]) { $1 },
                    handler: putSettings
                ).versioned(ifMatch: true, etagStatuses: [200, 202, 412])),
            APIRoute(
                .get, "/v1/apps/{appId}/analytics-rebuilds/{rebuildId}", access: .admin,
                operationId: "getAnalyticsRebuild",
                summary: "A rebuild of the aggregates queued by the analytics settings (its id, or latest): "
                    + "status and progress.",
                tag: "admin", responses: errors.merging([200: "AnalyticsRebuild"]) { $1 }, handler: getRebuild),
        ]
    }

    /// The 202 of the settings `PUT` names the rebuild's status route.
    private static func withLocation(_ route: APIRoute) -> APIRoute {
        var route = route
        route.responseHeaders[202, default: []].append("Location")
        return route
    }

    // MARK: - Metrics

    @Sendable func metric(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let name = try context.parameter("metric")
        if let cohortMetric = AnalyticsCohortMetric(rawValue: name) {
            return try await cohorts(cohortMetric, request, context)
        }
        guard let metric = AnalyticsMetric(rawValue: name) else {
            let names = AnalyticsMetric.allCases.map(\.rawValue) + AnalyticsCohortMetric.allCases.map(\.rawValue)
            throw HTTPError.badRequest(
                "metric must be one of overview, \(names.joined(separator: ", ")).", code: "invalid_analytics_query")
        }
        let query = try AnalyticsQuery(request, today: CalendarDay(containing: clock.now()))
        let app = try await apps.app(context)
        let (series, settings) = try await Self.series(
            appId: app.id, query: query, buckets: query.buckets, apps: apps, now: clock.now(),
            readsChurn: metric == .churn)
        let points = series.points(metric)
        if query.format == .csv {
            return AnalyticsCSV.response(metric: metric, points: points)
        }
        let body: JSONValue = .object([
            "appId": .string(app.id), "metric": .string(metric.rawValue),
            "environment": .string(query.environment.rawValue), "from": .string(query.from.iso8601),
            "to": .string(query.to.iso8601), "resolution": .string(query.resolution.rawValue),
            "filters": .object([
                "productId": query.filter.productId.map { .string($0) } ?? .null,
                "storefront": query.filter.storefront.map { .string($0) } ?? .null,
                "subscriptionGroup": query.filter.subscriptionGroup.map { .string($0) } ?? .null,
                "store": query.filter.store.map { .string($0.rawValue) } ?? .null,
            ]),
            "reportingCurrency": settings.reportingCurrency.map { .string($0) } ?? .null,
            "points": .array(points),
        ])
        return JSONResponse.make(body)
    }

    /// Retention or LTV: cohort months from the month of `from` (default: 11 months before the
    /// month of `to`) through the month of `to`; `resolution` is always `month`.
    func cohorts(_ metric: AnalyticsCohortMetric, _ request: HTTPRequest, _ context: RequestContext) async throws
        -> HTTPResponse
    {
        let now = clock.now()
        var query = try AnalyticsQuery(request, today: CalendarDay(containing: now))
        // Cohorts are kept for App Store subscriptions and customers only (docs/analytics.md):
        // their tables have no store to filter on.
        guard query.filter.store == nil else {
            throw HTTPError.badRequest(
                "store is not a filter of \(metric.rawValue): its cohorts are the App Store's.",
                code: "invalid_analytics_query")
        }
        if request.queryValue("from") == nil {
            let last = AnalyticsCohorts.months(query).through
            let months = last.year * 12 + last.month - 1 - 11
            query.from = CalendarDay(year: months / 12, month: months % 12 + 1, day: 1)
        }
        let app = try await apps.app(context)
        let (cohorts, settings) = try await Self.cohorts(metric, appId: app.id, query: query, apps: apps, now: now)
        if query.format == .csv { return AnalyticsCohorts.csv(metric: metric, cohorts: cohorts) }
        return JSONResponse.make(
            JSONValue.object([
                "appId": .string(app.id), "metric": .string(metric.rawValue),
                "environment": .string(query.environment.rawValue), "from": .string(query.from.iso8601),
                "to": .string(query.to.iso8601), "resolution": .string("month"),
                "filters": .object([
                    "productId": query.filter.productId.map { .string($0) } ?? .null,
                    "storefront": query.filter.storefront.map { .string($0) } ?? .null,
                    "subscriptionGroup": query.filter.subscriptionGroup.map { .string($0) } ?? .null,
                ]),
                "reportingCurrency": settings.reportingCurrency.map { .string($0) } ?? .null,
                "cohorts": .array(cohorts),
            ]))
    }

    /// The cohorts of `metric` for `query`'s months; the dashboard calls it in process.
    static func cohorts(
        _ metric: AnalyticsCohortMetric, appId: String, query: AnalyticsQuery, apps: AppDirectory, now: Timestamp
    ) async throws -> ([JSONValue], AnalyticsSettings) {
        let (from, through) = AnalyticsCohorts.months(query)
        let environment = query.environment
        let filter = query.filter
        switch metric {
        case .retention:
            let (settings, totals) = try await apps.read { reader in
                (
                    try reader.analyticsSettings(appId: appId)?.settings ?? AnalyticsSettings(),
                    try reader.analyticsRetention(
                        appId: appId, environment: environment, fromMonth: from, throughMonth: through, filter: filter)
                )
            }
            return (AnalyticsCohorts.retention(totals), settings)
        case .ltv:
            let (settings, totals) = try await apps.read { reader in
                let settings = try reader.analyticsSettings(appId: appId)?.settings ?? AnalyticsSettings()
                return (
                    settings,
                    try reader.analyticsLTV(
                        appId: appId, environment: environment, fromMonth: from, throughMonth: through, filter: filter,
                        dayBoundaries: AnalyticsCohorts.rateBoundaries(settings.exchangeRateTable))
                )
            }
            return (AnalyticsCohorts.ltv(totals, table: settings.exchangeRateTable, now: now), settings)
        }
    }

    /// Reads the totals the buckets need and builds the series.
    static func series(
        appId: String, query: AnalyticsQuery, buckets: [(start: CalendarDay, end: CalendarDay)], apps: AppDirectory,
        now: Timestamp, readsChurn: Bool
    ) async throws -> (AnalyticsSeries, AnalyticsSettings) {
        let first = buckets.first!.start
        let last = buckets.last!.end
        let environment = query.environment
        let filter = query.filter
        // Churn reads the runs that ended in each bucket, up to now; the periods active now are
        // read only when a bucket has not ended.
        let readsActiveNow = now < last.adding(days: 1).start
        let churnWindows = readsChurn ? AnalyticsSeries.churnWindows(buckets: buckets, now: now) : []
        let (settings, before, daily, activeNow, churnEnds) = try await apps.read { reader in
            (
                try reader.analyticsSettings(appId: appId)?.settings ?? AnalyticsSettings(),
                try reader.analyticsTotalsBefore(appId: appId, environment: environment, day: first, filter: filter),
                try reader.analyticsDailyTotals(
                    appId: appId, environment: environment, from: first, through: last.adding(days: 1), filter: filter),
                readsActiveNow
                    ? try reader.analyticsActiveAt(
                        appId: appId, environment: environment, instant: now, filter: filter) : [],
                try reader.analyticsChurnEnds(
                    appId: appId, environment: environment, windows: churnWindows, filter: filter)
            )
        }
        let series = AnalyticsSeries(
            buckets: buckets, before: before, daily: daily, table: settings.exchangeRateTable, now: now,
            activeNow: activeNow, churnEnds: churnEnds)
        return (series, settings)
    }

    // MARK: - Overview

    @Sendable func overview(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let query = try AnalyticsQuery(request, today: CalendarDay(containing: clock.now()), series: false)
        let app = try await apps.app(context)
        return JSONResponse.make(try await Self.overview(appId: app.id, query: query, apps: apps, now: clock.now()))
    }

    /// The overview's body: the cards of `query`'s period and of the period of the same length
    /// before it. The dashboard's overview calls it in process, so both show the same figures.
    static func overview(appId: String, query: AnalyticsQuery, apps: AppDirectory, now: Timestamp) async throws
        -> JSONValue
    {
        let length = query.to.daysSince1970 - query.from.daysSince1970 + 1
        let previous = (start: query.from.adding(days: -length), end: query.from.adding(days: -1))
        let (series, settings) = try await Self.series(
            appId: appId, query: query, buckets: [previous, (query.from, query.to)], apps: apps, now: now,
            readsChurn: false)
        func card(_ metric: String, _ field: String, in name: AnalyticsMetric, money: Bool = false) -> JSONValue {
            let points = series.points(name)
            func value(_ point: JSONValue) -> Int64? {
                guard case .object(let object) = point else { return nil }
                if money {
                    if case .object(let reporting)? = object["reporting"], case .integer(let v)? = reporting[field] {
                        return v
                    }
                    return nil
                }
                if case .integer(let v)? = object[field] { return v }
                return nil
            }
            let now = value(points[1])
            let before = value(points[0])
            var card: [String: JSONValue] = [
                "metric": .string(metric), "value": now.map { .integer($0) } ?? .null,
                "previous": before.map { .integer($0) } ?? .null,
                "change": now.flatMap { n in before.map { b in Self.change(n, b) } } ?? .null,
            ]
            if money {
                card["currency"] = settings.reportingCurrency.map { .string($0) } ?? .null
                if case .object(let object) = points[1] {
                    card["byCurrency"] = object["byCurrency"] ?? .array([])
                }
            }
            return .object(card)
        }
        return .object([
            "appId": .string(appId), "environment": .string(query.environment.rawValue),
            "from": .string(query.from.iso8601), "to": .string(query.to.iso8601),
            "previousFrom": .string(previous.start.iso8601), "previousTo": .string(previous.end.iso8601),
            "reportingCurrency": settings.reportingCurrency.map { .string($0) } ?? .null,
            "cards": .array([
                card("active-subscriptions", "count", in: .activeSubscriptions),
                card("active-trials", "count", in: .activeTrials),
                card("mrr", "gross", in: .mrr, money: true),
                card("revenue", "gross", in: .revenue, money: true),
                card("proceeds", "proceeds", in: .revenue, money: true),
                card("new-customers", "count", in: .newCustomers),
                card("refunds", "count", in: .refunds),
            ]),
        ])
    }

    /// (value − previous) / previous to 4 decimals; `null` when previous is 0.
    static func change(_ value: Int64, _ previous: Int64) -> JSONValue {
        AnalyticsSeries.ratio(value - previous, previous)
    }

    // MARK: - Settings

    @Sendable func getSettings(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let app = try await apps.record(context)
        let appId = app.id
        let stored = try await apps.read { reader in try reader.analyticsSettings(appId: appId) }
        return Self.respond(stored ?? StoredAnalyticsSettings(settings: AnalyticsSettings(), version: 0))
    }

    @Sendable func putSettings(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let settings = try RequestBody.decode(AnalyticsSettings.self, from: request)
        if let failure = settings.validationFailure {
            throw HTTPError.badRequest("\(failure).", code: "invalid_body")
        }
        let precondition = try VersionPrecondition(request)
        let app = try await apps.record(context)
        let appId = app.id
        let now = clock.now()
        let actor = context[PrincipalKey.self]?.actor ?? "api"
        let (version, rebuild) = try await apps.write("admin") {
            transaction -> (Int64, AnalyticsRebuildRecord?) in
            guard try transaction.lockApp(id: appId) != nil else { throw ErrorMapping.ingestionFailure(.appNotFound) }
            let current = try transaction.analyticsSettings(appId: appId)
            try precondition.check(current: current?.version ?? 0, resource: "analytics settings")
            let version = try transaction.saveAnalyticsSettings(appId: appId, settings, at: now)
            // Proceeds depend on the commission terms: a change of them queues a rebuild of the
            // stored aggregates (superseding one still running), which a job worker runs.
            var rebuild: AnalyticsRebuildRecord?
            if (current?.settings ?? AnalyticsSettings()).commissionRule != settings.commissionRule {
                rebuild = try transaction.requestAnalyticsRebuild(appId: appId, settingsVersion: version, at: now)
            }
            var detail: [String: JSONValue] = ["version": .integer(version)]
            if let rebuild { detail["rebuildId"] = .integer(rebuild.id) }
            try transaction.appendAudit(
                NewAuditEntry(
                    at: now, actor: actor, action: "analytics.settings.update", appId: appId, detail: .object(detail)))
            return (version, rebuild)
        }
        var response = Self.respond(StoredAnalyticsSettings(settings: settings, version: version), rebuild: rebuild)
        if let rebuild {
            response.status = .accepted
            response.headers["Location"] = Self.rebuildPath(appId: appId, id: rebuild.id)
        }
        return response
    }

    @Sendable func getRebuild(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let text = try context.parameter("rebuildId")
        let id: Int64?
        if text == "latest" {
            id = nil
        } else if text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let number = Int64(text)
        {
            id = number
        } else {
            throw Self.rebuildNotFound
        }
        let app = try await apps.record(context)
        let appId = app.id
        guard let rebuild = try await apps.read({ reader in try reader.analyticsRebuild(appId: appId, id: id) }) else {
            throw Self.rebuildNotFound
        }
        return JSONResponse.make(Self.json(rebuild))
    }

    static let rebuildNotFound = HTTPError(
        status: .notFound, code: "analytics_rebuild_not_found", message: "No such analytics rebuild of the app.")

    static func rebuildPath(appId: String, id: Int64) -> String {
        "/v1/apps/\(DashboardHTTP.encode(appId))/analytics-rebuilds/\(id)"
    }

    /// A rebuild as the API shows it (docs/analytics.md); times in milliseconds since 1970.
    static func json(_ rebuild: AnalyticsRebuildRecord) -> JSONValue {
        func time(_ value: Timestamp?) -> JSONValue { value.map { .integer($0.millisecondsSince1970) } ?? .null }
        let finished = rebuild.status == .completed
        return .object([
            "id": .integer(rebuild.id), "appId": .string(rebuild.appId),
            "settingsVersion": .integer(rebuild.settingsVersion), "status": .string(rebuild.status.rawValue),
            "customersDone": .integer(rebuild.customersDone), "customersTotal": .integer(rebuild.customersTotal),
            "contributionsChanged": .integer(rebuild.contributionsChanged),
            "rowsRepaired": finished ? .integer(rebuild.rowsRepaired) : .null,
            "changed": finished ? .bool(rebuild.contributionsChanged > 0 || rebuild.rowsRepaired > 0) : .null,
            "supersededBy": rebuild.supersededBy.map { .integer($0) } ?? .null,
            "requestedAt": time(rebuild.requestedAt), "startedAt": time(rebuild.startedAt),
            "finishedAt": time(rebuild.finishedAt), "attempts": .integer(Int64(rebuild.attempts)),
            "error": rebuild.lastError.map { .string($0) } ?? .null,
            "href": .string(rebuildPath(appId: rebuild.appId, id: rebuild.id)),
        ])
    }

    /// The settings with their version; after a `PUT`, `rebuild` names the rebuild it queued
    /// (`null`: nothing to recompute).
    static func respond(_ stored: StoredAnalyticsSettings, rebuild: AnalyticsRebuildRecord?? = nil) -> HTTPResponse {
        var object: [String: JSONValue] = [:]
        if case .object(let settings) =
            (try? JSONDecoder().decode(JSONValue.self, from: AppStoreJSON.encode(stored.settings))) ?? .null
        {
            object = settings
        }
        object["version"] = .integer(stored.version)
        if let rebuild {
            object["rebuild"] = rebuild.map { json($0) } ?? .null
        }
        var response = JSONResponse.make(JSONValue.object(object))
        response.headers["ETag"] = VersionPrecondition.etag(stored.version)
        return response
    }
}
