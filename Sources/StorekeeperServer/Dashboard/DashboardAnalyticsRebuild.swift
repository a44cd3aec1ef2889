import AppStoreModels
import Foundation
import HTTPServer
import Storage

/// The analytics rebuild a change of the commission terms queues (docs/analytics.md), as the
/// dashboard shows it: on the pages of figures (overview, cohorts) a note while the app's latest
/// rebuild is queued or running, or when it failed, and a small line once it completed; on the
/// operations page the recent rebuilds.
///
/// Nothing refreshes by itself: a person reading the figures or filling in a filter is not
/// interrupted (WCAG 2.2.1); a note of an unfinished rebuild carries a refresh link instead.
extension DashboardController {
    /// The most rebuilds the operations page lists.
    static let rebuildListLimit = 20

    /// The app's latest rebuild; `nil` when it never had one.
    func latestRebuild(appId: String) async throws -> AnalyticsRebuildRecord? {
        try await apps.read { reader in try reader.analyticsRebuild(appId: appId, id: nil) }
    }

    /// `path` with the request's own query: the page as it is, to load again.
    static func refreshTarget(_ path: String, _ request: HTTPRequest) -> String {
        guard let query = request.query, !query.isEmpty else { return path }
        return path + "?" + query
    }

    /// `2 of 5 customers (40%)`; no share while the total is not known yet (0).
    static func rebuildProgress(_ rebuild: AnalyticsRebuildRecord) -> String {
        let counted = "\(rebuild.customersDone) of \(rebuild.customersTotal) customers"
        guard rebuild.customersTotal > 0 else { return counted }
        return counted + " (\(rebuild.customersDone * 100 / rebuild.customersTotal)%)"
    }

    /// Why a rebuild was asked for (the commission terms are its only cause today).
    static func rebuildReason(_ rebuild: AnalyticsRebuildRecord) -> String {
        "commission terms changed (settings version \(rebuild.settingsVersion))"
    }

    /// The note above the figures of an app whose latest rebuild is `rebuild`; `refresh` is the
    /// page's own address. Empty when the app never had a rebuild.
    static func rebuildNote(_ rebuild: AnalyticsRebuildRecord?, appId: String, refresh: String) -> HTML {
        guard let rebuild else { return "" }
        let attributes: HTML = """
            id="analytics-rebuild" data-rebuild-id="\(rebuild.id)" data-status="\(rebuild.status.rawValue)" \
            data-customers-done="\(rebuild.customersDone)" data-customers-total="\(rebuild.customersTotal)"
            """
        let recomputing: HTML = """
            The figures shown are being recomputed and may change until it finishes. \
            <a href="\(refresh)">Refresh</a>
            """
        switch rebuild.status {
        case .queued:
            return """
                <div class="notice" role="status" \(attributes)><p><strong>Analytics rebuild queued.</strong> \
                The commission terms changed (settings version \(rebuild.settingsVersion)) at \
                \(DashboardPages.time(rebuild.requestedAt)); rebuild \(rebuild.id) has not started yet. \
                \(recomputing)</p></div>
                """
        case .running:
            return """
                <div class="notice" role="status" \(attributes)><p><strong>Analytics rebuild running: \
                \(rebuildProgress(rebuild)).</strong> Rebuild \(rebuild.id) started at \
                \(DashboardPages.time(rebuild.startedAt)) after a change of the commission terms (settings version \
                \(rebuild.settingsVersion)). \(recomputing)</p></div>
                """
        case .failed:
            return """
                <div class="notice error" role="alert" \(attributes)><p><strong>Analytics rebuild failed: \
                \(rebuild.lastError ?? "given up").</strong> Rebuild \(rebuild.id) stopped after \
                \(rebuildProgress(rebuild)); it started at \(DashboardPages.time(rebuild.startedAt)). The figures shown \
                are only partly recomputed for the new commission terms: run \
                <code>storekeeper analytics rebuild --app \(appId)</code> or change the terms again to recompute \
                them.</p></div>
                """
        case .completed:
            return """
                <p class="muted rebuilt" \(attributes)>Figures recomputed for the current commission terms at \
                \(DashboardPages.time(rebuild.finishedAt)) (rebuild \(rebuild.id), \(rebuild.customersDone) \
                customers).</p>
                """
        case .superseded:
            // Never the latest: a rebuild is superseded in the transaction that adds its successor.
            return ""
        }
    }

    /// The operations page's table of the recent rebuilds, newest first.
    static func rebuildTable(_ rebuilds: [AnalyticsRebuildRecord]) -> HTML {
        let rows = rebuilds.map { rebuild -> HTML in
            let outcome: String
            switch rebuild.status {
            case .completed:
                outcome = "\(rebuild.contributionsChanged) contributions changed, \(rebuild.rowsRepaired) rows repaired"
            case .superseded:
                outcome = rebuild.supersededBy.map { "superseded by rebuild \($0)" } ?? "superseded"
            case .failed:
                outcome = rebuild.lastError ?? "given up"
            case .queued, .running:
                outcome = rebuild.lastError.map { "retrying after: " + $0 } ?? "—"
            }
            return """
                <tr data-rebuild-id="\(rebuild.id)"><td class="number">\(rebuild.id)</td>\
                <td>\(rebuild.status.rawValue)</td><td>\(rebuildReason(rebuild))</td>\
                <td>\(rebuildProgress(rebuild))</td><td>\(DashboardPages.time(rebuild.requestedAt))</td>\
                <td>\(DashboardPages.time(rebuild.startedAt))</td><td>\(DashboardPages.time(rebuild.finishedAt))</td>\
                <td class="number">\(rebuild.attempts)</td><td>\(outcome)</td></tr>
                """
        }
        let empty: HTML = "<tr><td colspan=\"9\" class=\"muted\">None.</td></tr>"
        return """
            <div class="scroll"><table id="analytics-rebuilds"><thead><tr><th scope="col" class="number">Rebuild</th>\
            <th scope="col">State</th><th scope="col">Reason</th><th scope="col">Progress</th>\
            <th scope="col">Requested</th><th scope="col">Started</th><th scope="col">Finished</th>\
            <th scope="col" class="number">Attempts</th><th scope="col">Outcome</th></tr></thead>\
            <tbody>\(rows.isEmpty ? [empty] : rows)</tbody></table></div>
            """
    }
}
