import AppStoreModels
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion

/// The operations page: notification intake by type and outcome, verification failures by
/// rule, webhook deliveries (failing and dead-lettered, with replay), and the workers' state
/// (history replay cursors, status polling, the job queue, the recent analytics rebuilds). Every figure is read from the
/// shared database, so each instance shows the same page.
extension DashboardController {
    /// The window the intake and failure counts cover.
    static let operationsWindowDays = 7
    /// The most failed deliveries the page lists.
    static let failedDeliveryLimit = 100

    struct OperationsView: Sendable {
        var intake: [NotificationIntakeCount]
        var failures: [VerificationFailureCount]
        var deliveries: DeliverySummary
        var failed: [OutboxEntry]
        var jobs: [JobQueueSummary]
        var cursors: [HistoryCursor]
        var watches: [SubscriptionWatchSummary]
        var rebuilds: [AnalyticsRebuildRecord]
    }

    @Sendable func operations(_ request: HTTPRequest, _ session: DashboardSession, _ app: AppRuntime) async throws
        -> HTTPResponse
    {
        let appId = app.id
        let now = clock.now()
        let since = now.adding(milliseconds: -Int64(Self.operationsWindowDays) * 86_400_000)
        let view = try await apps.read { reader in
            OperationsView(
                intake: try reader.notificationIntake(appId: appId, since: since),
                failures: try reader.verificationFailures(appId: appId, since: since),
                deliveries: try reader.deliverySummary(appId: appId),
                failed: try reader.failedDeliveries(appId: appId, after: nil, limit: Self.failedDeliveryLimit),
                jobs: try reader.jobQueues(appId: appId, now: now),
                cursors: try reader.historyCursors().filter { $0.appId == appId },
                watches: try reader.subscriptionWatches(appId: appId),
                rebuilds: try reader.analyticsRebuilds(appId: appId, limit: Self.rebuildListLimit))
        }
        let notice = Self.notice(request.queryValue("notice"))
        return DashboardHTTP.page(
            Self.operationsPage(
                view, app: app, notice: notice, context: context(session, appId: app.id, section: .operations)))
    }

    @Sendable func replayDelivery(
        _ request: HTTPRequest, _ context: RequestContext, _ form: [String: String], _ session: DashboardSession,
        _ app: AppRuntime
    ) async throws -> HTTPResponse {
        guard let deliveryId = Int64(try context.parameter("deliveryId")) else {
            throw DashboardFailure(status: .badRequest, message: "The delivery id must be a number.")
        }
        let appId = app.id
        let now = clock.now()
        let actor = session.actor
        let replayed = try await apps.write("admin") { transaction -> Bool in
            guard try transaction.replayDelivery(id: deliveryId, appId: appId, at: now) else { return false }
            _ = try transaction.appendAudit(
                NewAuditEntry(
                    at: now, actor: actor, action: "webhook.replay", appId: appId,
                    detail: .object(["deliveryId": .integer(deliveryId), "via": .string("dashboard")])))
            return true
        }
        let code = replayed ? "replayed" : "replay_not_found"
        let base = "/dashboard/apps/" + DashboardHTTP.encode(appId)
        if form["returnTo"] == "customer", let appUserId = form["appUserId"],
            CustomersController.isValidUserId(appUserId)
        {
            return DashboardHTTP.redirect(
                DashboardHTTP.link(
                    base + "/customers", [("q", appUserId), ("by", "appUserId"), ("notice", code)]))
        }
        return DashboardHTTP.redirect(DashboardHTTP.link(base + "/operations", [("notice", code)]))
    }

    // MARK: Rendering

    static func operationsPage(
        _ view: OperationsView, app: AppRuntime, notice: (text: String, isError: Bool)?,
        context: DashboardPageContext
    ) -> HTML {
        let base = "/dashboard/apps/" + DashboardHTTP.encode(app.id)
        let intake = view.intake.map { row -> HTML in
            """
            <tr><td>\(row.notificationType)</td><td>\(row.subtype ?? "—")</td><td>\(row.outcome ?? "pending")</td>\
            <td class="number">\(row.count)</td><td>\(DashboardPages.time(row.lastReceivedAt))</td></tr>
            """
        }
        let failures = view.failures.map { row -> HTML in
            """
            <tr><td>\(row.rule)</td><td class="number">\(row.count)</td>\
            <td>\(DashboardPages.time(row.lastAt))</td></tr>
            """
        }
        let failed = view.failed.map { delivery -> HTML in
            let action: HTML =
                delivery.deadLetteredAt == nil
                ? "<span class=\"muted\">retrying</span>"
                : """
                <form method="post" action="\(base)/deliveries/\(delivery.id)/replay">\
                \(DashboardPages.csrfField(context.csrfToken))\
                <button type="submit" class="secondary">Replay delivery \(delivery.id)</button></form>
                """
            return """
                <tr><td class="number">\(delivery.id)</td><td>\(delivery.endpointId)</td>\
                <td class="number">\(delivery.eventSequence)</td><td class="number">\(delivery.attempts)</td>\
                <td>\(delivery.lastError.map(WebhookDeliveryFailure.listedCategory) ?? "—")</td>\
                <td>\(delivery.deadLetteredAt == nil ? "failing" : "dead-lettered " + DashboardPages.time(delivery.deadLetteredAt))</td>\
                <td>\(action)</td></tr>
                """
        }
        let jobs = view.jobs.map { job -> HTML in
            """
            <tr><td>\(job.kind)</td><td class="number">\(job.queued)</td><td class="number">\(job.running)</td>\
            <td class="number">\(job.failed)</td><td class="number">\(job.completed)</td>\
            <td>\(DashboardPages.time(job.oldestDueAt))</td></tr>
            """
        }
        let cursors = view.cursors.map { cursor -> HTML in
            """
            <tr><td>\(cursor.environment.rawValue)</td><td>\(DashboardPages.time(cursor.cursorAt))</td>\
            <td>\(DashboardPages.time(cursor.lastRunAt))</td><td>\(cursor.lastError ?? "—")</td>\
            <td>\(cursor.leaseOwner == nil ? "idle" : "running")</td></tr>
            """
        }
        let watches = view.watches.map { watch -> HTML in
            """
            <tr><td>\(watch.environment.rawValue)</td><td class="number">\(watch.watched)</td>\
            <td class="number">\(watch.inBillingRetry)</td><td class="number">\(watch.neverPolled)</td>\
            <td>\(DashboardPages.time(watch.lastPolledAt))</td></tr>
            """
        }
        let deliveries = view.deliveries
        let noticeHTML: HTML =
            notice.map { "<p class=\"notice\($0.isError ? " error" : "")\" role=\"status\">\($0.text)</p>" } ?? ""
        let empty: HTML = "<tr><td colspan=\"7\" class=\"muted\">None.</td></tr>"
        return DashboardPages.layout(
            title: "Operations", context: context,
            body: """
                <h1>Operations</h1>\(noticeHTML)
                <h2>Notification intake (last \(operationsWindowDays) days)</h2>
                <div class="scroll"><table id="intake"><thead><tr><th scope="col">Type</th><th scope="col">Subtype</th>\
                <th scope="col">Outcome</th><th scope="col" class="number">Count</th><th scope="col">Last</th></tr>\
                </thead><tbody>\(intake.isEmpty ? [empty] : intake)</tbody></table></div>
                <h2>Verification failures by rule (last \(operationsWindowDays) days)</h2>
                <div class="scroll"><table id="verification-failures"><thead><tr><th scope="col">Rule</th>\
                <th scope="col" class="number">Count</th><th scope="col">Last</th></tr></thead>\
                <tbody>\(failures.isEmpty ? [empty] : failures)</tbody></table></div>
                <h2>Webhook deliveries</h2>
                <ul class="cards" id="delivery-summary">\
                <li class="card"><span class="label">Pending</span> <span class="value" id="deliveries-pending">\
                \(deliveries.pending)</span></li>\
                <li class="card"><span class="label">Failing</span> <span class="value" id="deliveries-failing">\
                \(deliveries.failing)</span></li>\
                <li class="card"><span class="label">Dead-lettered</span> <span class="value" id="deliveries-dead">\
                \(deliveries.deadLettered)</span></li>\
                <li class="card"><span class="label">Delivered</span> <span class="value" id="deliveries-delivered">\
                \(deliveries.delivered)</span></li></ul>
                <h3>Failing and dead-lettered (oldest first, at most \(failedDeliveryLimit))</h3>
                <div class="scroll"><table id="failed-deliveries"><thead><tr><th scope="col" class="number">Delivery</th>\
                <th scope="col">Endpoint</th><th scope="col" class="number">Event</th>\
                <th scope="col" class="number">Attempts</th><th scope="col">Last error</th><th scope="col">State</th>\
                <th scope="col">Action</th></tr></thead><tbody>\(failed.isEmpty ? [empty] : failed)</tbody></table></div>
                <h2>Workers</h2>
                <h3>Notification history replay</h3>
                <div class="scroll"><table id="history-cursors"><thead><tr><th scope="col">Environment</th>\
                <th scope="col">Cursor</th><th scope="col">Last run</th><th scope="col">Last error</th>\
                <th scope="col">State</th></tr></thead><tbody>\(cursors.isEmpty ? [empty] : cursors)</tbody></table></div>
                <h3>Subscription status polling</h3>
                <div class="scroll"><table id="polling"><thead><tr><th scope="col">Environment</th>\
                <th scope="col" class="number">Watched</th><th scope="col" class="number">In billing retry</th>\
                <th scope="col" class="number">Never polled</th><th scope="col">Last poll</th></tr></thead>\
                <tbody>\(watches.isEmpty ? [empty] : watches)</tbody></table></div>
                <h3>Jobs</h3>
                <div class="scroll"><table id="jobs"><thead><tr><th scope="col">Kind</th>\
                <th scope="col" class="number">Queued</th><th scope="col" class="number">Running</th>\
                <th scope="col" class="number">Failed</th><th scope="col" class="number">Completed</th>\
                <th scope="col">Oldest due</th></tr></thead><tbody>\(jobs.isEmpty ? [empty] : jobs)</tbody></table></div>
                <h3 id="analytics-rebuilds-heading">Analytics rebuilds (latest \(rebuildListLimit))</h3>
                <p class="muted">A change of the commission terms recomputes the app's analytics in the background; \
                the figures change as each rebuild goes.</p>
                \(rebuildTable(view.rebuilds))
                """)
    }
}
