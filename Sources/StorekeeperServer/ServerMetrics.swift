import AppStoreModels
import Foundation
import HTTPServer
import StorekeeperIngestion
import Synchronization

/// The server's counters and histograms, rendered in the Prometheus text format at `/metrics`.
///
/// Requests by route pattern (never the raw path) and status with latency histograms,
/// notifications by type and outcome, verification failures by rule, webhook deliveries by
/// outcome, the outbox backlog the delivery worker last saw, database latency, group commit,
/// purchase completions and jobs, the recovery workers, consumption answers, and the HTTP
/// core's connections (docs/server.md lists every metric).
/// - Note: Thread-safe: all state sits behind one `Mutex`.
public final class ServerMetrics: IngestionMetrics {
    static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct Histogram {
        var counts = [Int](repeating: 0, count: ServerMetrics.latencyBuckets.count)
        var sum: Double = 0
        var count = 0

        mutating func observe(_ seconds: Double) {
            for (index, bound) in ServerMetrics.latencyBuckets.enumerated() where seconds <= bound {
                counts[index] += 1
            }
            sum += seconds
            count += 1
        }
    }

    private struct State {
        var requests: [[String]: Int] = [:]
        var requestLatency: [[String]: Histogram] = [:]
        var notifications: [[String]: Int] = [:]
        var verificationFailures: [String: Int] = [:]
        var playPushRefusals: [String: Int] = [:]
        var webhookDeliveries: [String: Int] = [:]
        var databaseLatency: [String: Histogram] = [:]
        var purchaseCompletions: [String: Int] = [:]
        var jobs: [[String]: Int] = [:]
        var outboxClaimed = 0
        var outboxOldestAgeSeconds: Double = 0
        var historyReplayed: [[String]: Int] = [:]
        var historyNew: [[String]: Int] = [:]
        var historyRuns: [String: Int] = [:]
        var historyCursors: [[String]: Timestamp?] = [:]
        var statusPolls: [String: Int] = [:]
        var playVoidedListed: [String: Int] = [:]
        var playVoidedNew: [String: Int] = [:]
        var playVoidedSkipped: [String: Int] = [:]
        var playVoidedRuns: [String: Int] = [:]
        var playVoidedCursors: [String: Timestamp?] = [:]
        var playVoidedUnmatched: [String: Int] = [:]
        var playRereads: [String: Int] = [:]
        var customerSyncs: [String: Int] = [:]
        var consumptionAnswers: [String: Int] = [:]
        var consumptionOutcomes: [String: Int] = [:]
    }

    private let state = Mutex(State())
    /// The HTTP server's connection counters, read at each render (`nil`: no server attached).
    private let connections = Mutex<(@Sendable () -> HTTPServer.ConnectionStatistics?)?>(nil)
    /// The clock cursor ages are measured against (the server's clock).
    private let now: @Sendable () -> Timestamp

    public init(now: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) }) {
        self.now = now
    }

    /// One history replay run of an app and environment: notifications handed to ingestion,
    /// how many of them were new, and how the run ended (`completed`, `partial`, `skipped`,
    /// `failed`).
    public func recordHistoryReplay(
        appId: String, environment: String, replayed: Int, newNotifications: Int, outcome: String
    ) {
        state.withLock {
            $0.historyReplayed[[appId, environment], default: 0] += replayed
            $0.historyNew[[appId, environment], default: 0] += newNotifications
            $0.historyRuns[outcome, default: 0] += 1
        }
    }

    /// Where an app's history cursor stands (`nil`: no complete run yet).
    public func recordHistoryCursor(appId: String, environment: String, at cursor: Timestamp?) {
        state.withLock { $0.historyCursors[[appId, environment]] = .some(cursor) }
    }

    /// One status poll's outcome (`applied`, `unclaimed`, `recorded`, `failed`).
    public func recordStatusPoll(outcome: String) {
        state.withLock { $0.statusPolls[outcome, default: 0] += 1 }
    }

    /// One voided-purchases polling run of an app: entries Google listed, how many were new,
    /// how many were skipped, and how the run ended (`completed`, `partial`, `skipped`, `failed`).
    public func recordPlayVoidedRun(appId: String, listed: Int, newVoided: Int, skipped: Int, outcome: String) {
        state.withLock {
            $0.playVoidedListed[appId, default: 0] += listed
            $0.playVoidedNew[appId, default: 0] += newVoided
            $0.playVoidedSkipped[appId, default: 0] += skipped
            $0.playVoidedRuns[outcome, default: 0] += 1
        }
    }

    /// Where an app's voided-purchases cursor stands (`nil`: no complete run yet).
    public func recordPlayVoidedCursor(appId: String, at cursor: Timestamp?) {
        state.withLock { $0.playVoidedCursors[appId] = .some(cursor) }
    }

    /// How many voided purchases an app keeps for tokens no read showed yet (their refunds
    /// wait for the token).
    public func recordPlayVoidedUnmatched(appId: String, count: Int) {
        state.withLock { $0.playVoidedUnmatched[appId] = count }
    }

    /// One Play subscription re-read's outcome (`applied`, `unclaimed`, `recorded`, `not_found`,
    /// `refused`, `failed`, `store_error`).
    public func recordPlayReread(outcome: String) {
        state.withLock { $0.playRereads[outcome, default: 0] += 1 }
    }

    public func recordConsumption(outcome: String) {
        state.withLock { $0.consumptionAnswers[outcome, default: 0] += 1 }
    }

    public func recordConsumptionOutcome(_ outcome: String) {
        state.withLock { $0.consumptionOutcomes[outcome, default: 0] += 1 }
    }

    /// One on-demand sync's outcome (`synced`, `rate_limited`, `failed`).
    public func recordCustomerSync(outcome: String) {
        state.withLock { $0.customerSyncs[outcome, default: 0] += 1 }
    }

    public func recordRequest(route: String, method: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests[[route, method, String(status)], default: 0] += 1
            state.requestLatency[[route, method], default: Histogram()].observe(seconds)
        }
    }

    public func recordNotification(type: String, outcome: String) {
        state.withLock { $0.notifications[[type, outcome], default: 0] += 1 }
    }

    public func recordVerificationFailure(rule: String) {
        state.withLock { $0.verificationFailures[rule, default: 0] += 1 }
    }

    /// A Google Play push refused before anything was stored, by trust rule (`claim.audience`, …).
    public func recordPlayPushRefusal(rule: String) {
        state.withLock { $0.playPushRefusals[rule, default: 0] += 1 }
    }

    public func recordWebhookDelivery(outcome: String) {
        state.withLock { $0.webhookDeliveries[outcome, default: 0] += 1 }
    }

    public func recordDatabase(operation: String, seconds: Double) {
        state.withLock { $0.databaseLatency[operation, default: Histogram()].observe(seconds) }
    }

    public func recordPurchaseCompletion(outcome: String) {
        state.withLock { $0.purchaseCompletions[outcome, default: 0] += 1 }
    }

    /// One job run's outcome (`completed`, `retried`, `failed`, `store_error`) by kind.
    public func recordJob(kind: String, outcome: String) {
        state.withLock { $0.jobs[[kind, outcome], default: 0] += 1 }
    }

    /// What the delivery worker saw on its last claim: due deliveries claimed and how old the
    /// oldest claimed event was.
    public func recordOutbox(claimed: Int, oldestAgeSeconds: Double) {
        state.withLock {
            $0.outboxClaimed = claimed
            $0.outboxOldestAgeSeconds = oldestAgeSeconds
        }
    }

    /// Exports `source`'s connection counters (the HTTP server this application runs on).
    public func observeConnections(_ source: @escaping @Sendable () -> HTTPServer.ConnectionStatistics?) {
        connections.withLock { $0 = source }
    }

    /// The Prometheus text exposition (format 0.0.4).
    public func render() -> String {
        let state = self.state.withLock { $0 }
        var out = ""
        func header(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func labels(_ pairs: [(String, String)]) -> String {
            "{" + pairs.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        func histogram(_ name: String, _ pairs: [(String, String)], _ histogram: Histogram) {
            for (index, bound) in Self.latencyBuckets.enumerated() {
                out += "\(name)_bucket\(labels(pairs + [("le", format(bound))])) \(histogram.counts[index])\n"
            }
            out += "\(name)_bucket\(labels(pairs + [("le", "+Inf")])) \(histogram.count)\n"
            out += "\(name)_sum\(labels(pairs)) \(format(histogram.sum))\n"
            out += "\(name)_count\(labels(pairs)) \(histogram.count)\n"
        }

        header("storekeeper_http_requests_total", "counter", "HTTP requests by route pattern, method and status.")
        for (key, value) in state.requests.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out +=
                "storekeeper_http_requests_total\(labels([("route", key[0]), ("method", key[1]), ("status", key[2])])) \(value)\n"
        }
        header("storekeeper_http_request_duration_seconds", "histogram", "HTTP request latency by route pattern.")
        for (key, value) in state.requestLatency.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            histogram("storekeeper_http_request_duration_seconds", [("route", key[0]), ("method", key[1])], value)
        }
        header("storekeeper_notifications_total", "counter", "App Store notifications by type and outcome.")
        for (key, value) in state.notifications.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out += "storekeeper_notifications_total\(labels([("type", key[0]), ("outcome", key[1])])) \(value)\n"
        }
        header("storekeeper_verification_failures_total", "counter", "Signed payloads refused, by trust rule.")
        for (rule, value) in state.verificationFailures.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_verification_failures_total\(labels([("rule", rule)])) \(value)\n"
        }
        header(
            "storekeeper_play_push_refusals_total", "counter",
            "Google Play push requests refused for their OIDC token, by trust rule.")
        for (rule, value) in state.playPushRefusals.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_play_push_refusals_total\(labels([("rule", rule)])) \(value)\n"
        }
        header("storekeeper_webhook_deliveries_total", "counter", "Webhook delivery attempts by outcome.")
        for (outcome, value) in state.webhookDeliveries.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_webhook_deliveries_total\(labels([("outcome", outcome)])) \(value)\n"
        }
        header(
            "storekeeper_purchase_completions_total", "counter",
            "Posted signed transactions by completion from the App Store Server API (complete, pending, skipped).")
        for (outcome, value) in state.purchaseCompletions.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_purchase_completions_total\(labels([("outcome", outcome)])) \(value)\n"
        }
        header("storekeeper_jobs_total", "counter", "Job runs by kind and outcome.")
        for (key, value) in state.jobs.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out += "storekeeper_jobs_total\(labels([("kind", key[0]), ("outcome", key[1])])) \(value)\n"
        }
        header("storekeeper_outbox_due_claimed", "gauge", "Due webhook deliveries claimed by the last worker poll.")
        out += "storekeeper_outbox_due_claimed \(state.outboxClaimed)\n"
        header(
            "storekeeper_outbox_oldest_age_seconds", "gauge",
            "Age of the oldest event among the deliveries of the last worker poll.")
        out += "storekeeper_outbox_oldest_age_seconds \(format(state.outboxOldestAgeSeconds))\n"
        header(
            "storekeeper_history_replayed_total", "counter",
            "Notifications replayed from Get Notification History, by app and environment.")
        for (key, value) in state.historyReplayed.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out += "storekeeper_history_replayed_total\(labels([("app", key[0]), ("environment", key[1])])) \(value)\n"
        }
        header(
            "storekeeper_history_new_notifications_total", "counter",
            "Replayed notifications that had not been received before (missed deliveries), by app and environment.")
        for (key, value) in state.historyNew.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out +=
                "storekeeper_history_new_notifications_total\(labels([("app", key[0]), ("environment", key[1])])) \(value)\n"
        }
        header("storekeeper_history_runs_total", "counter", "History replay runs by outcome.")
        for (outcome, value) in state.historyRuns.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_history_runs_total\(labels([("outcome", outcome)])) \(value)\n"
        }
        header(
            "storekeeper_history_cursor_age_seconds", "gauge",
            "How far behind now each history cursor is (-1: no complete replay yet), by app and environment.")
        let instant = now()
        for (key, cursor) in state.historyCursors.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let age = cursor.map { Double(instant.millisecondsSince1970 - $0.millisecondsSince1970) / 1000 } ?? -1
            out +=
                "storekeeper_history_cursor_age_seconds\(labels([("app", key[0]), ("environment", key[1])])) \(format(age))\n"
        }
        header("storekeeper_status_polls_total", "counter", "Subscription status polls by outcome.")
        for (outcome, value) in state.statusPolls.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_status_polls_total\(labels([("outcome", outcome)])) \(value)\n"
        }
        header(
            "storekeeper_play_voided_listed_total", "counter",
            "Voided purchases listed by Google Play's voided-purchases polling, by app.")
        for (app, value) in state.playVoidedListed.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_play_voided_listed_total\(labels([("app", app)])) \(value)\n"
        }
        header(
            "storekeeper_play_voided_new_total", "counter",
            "Polled voided purchases that had not been received before (lost pushes), by app.")
        for (app, value) in state.playVoidedNew.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_play_voided_new_total\(labels([("app", app)])) \(value)\n"
        }
        header(
            "storekeeper_play_voided_skipped_total", "counter",
            "Polled voided purchases not ingested (malformed, environment not accepted), by app.")
        for (app, value) in state.playVoidedSkipped.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_play_voided_skipped_total\(labels([("app", app)])) \(value)\n"
        }
        header(
            "storekeeper_play_voided_unmatched", "gauge",
            "Voided purchases kept for purchase tokens Storekeeper has not read (refunds waiting for the token), by app."
        )
        for (app, value) in state.playVoidedUnmatched.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_play_voided_unmatched\(labels([("app", app)])) \(value)\n"
        }
        header("storekeeper_play_voided_runs_total", "counter", "Voided-purchases polling runs by outcome.")
        for (outcome, value) in state.playVoidedRuns.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_play_voided_runs_total\(labels([("outcome", outcome)])) \(value)\n"
        }
        header(
            "storekeeper_play_voided_cursor_age_seconds", "gauge",
            "How far behind now each voided-purchases cursor is (-1: no complete run yet), by app.")
        let voidedInstant = now()
        for (app, cursor) in state.playVoidedCursors.sorted(by: { $0.key < $1.key }) {
            let age =
                cursor.map { Double(voidedInstant.millisecondsSince1970 - $0.millisecondsSince1970) / 1000 } ?? -1
            out += "storekeeper_play_voided_cursor_age_seconds\(labels([("app", app)])) \(format(age))\n"
        }
        header("storekeeper_play_rereads_total", "counter", "Google Play subscription re-reads by outcome.")
        for (outcome, value) in state.playRereads.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_play_rereads_total\(labels([("outcome", outcome)])) \(value)\n"
        }
        header("storekeeper_customer_syncs_total", "counter", "On-demand customer syncs by outcome.")
        for (outcome, value) in state.customerSyncs.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_customer_syncs_total\(labels([("outcome", outcome)])) \(value)\n"
        }
        header("storekeeper_consumption_answers_total", "counter", "Consumption requests by how they were handled.")
        for (outcome, value) in state.consumptionAnswers.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_consumption_answers_total\(labels([("outcome", outcome)])) \(value)\n"
        }
        header(
            "storekeeper_consumption_refund_outcomes_total", "counter",
            "Refund decisions linked to answered consumption requests.")
        for (outcome, value) in state.consumptionOutcomes.sorted(by: { $0.key < $1.key }) {
            out += "storekeeper_consumption_refund_outcomes_total\(labels([("outcome", outcome)])) \(value)\n"
        }
        header("storekeeper_database_duration_seconds", "histogram", "Database transaction latency by operation.")
        for (operation, value) in state.databaseLatency.sorted(by: { $0.key < $1.key }) {
            histogram("storekeeper_database_duration_seconds", [("operation", operation)], value)
        }
        if let statistics = connections.withLock({ $0 })?() {
            header(
                "storekeeper_http_connections_open", "gauge", "TCP connections open now, those being closed included.")
            out += "storekeeper_http_connections_open \(statistics.open)\n"
            header(
                "storekeeper_http_connections_evicted_total", "counter",
                "Waiting connections closed to make room near connectionLimit, idle keep-alive ones first.")
            out += "storekeeper_http_connections_evicted_total \(statistics.evicted)\n"
            header(
                "storekeeper_http_connections_head_timeouts_total", "counter",
                "Connections closed because their request head was not complete within requestHeadTimeoutSeconds.")
            out += "storekeeper_http_connections_head_timeouts_total \(statistics.headTimeouts)\n"
            header(
                "storekeeper_http_connections_slow_bodies_total", "counter",
                "Connections closed because their request body arrived below minBodyBytesPerSecond.")
            out += "storekeeper_http_connections_slow_bodies_total \(statistics.slowBodies)\n"
            header(
                "storekeeper_http_connections_address_refusals_total", "counter",
                "Connections closed at accept because their client address held maxConnectionsPerAddress already.")
            out += "storekeeper_http_connections_address_refusals_total \(statistics.addressRefusals)\n"
        }
        return out
    }

    private func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    private func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// Counts every request the router answers by route pattern, method and status, with latency.
/// - Note: Immutable and `Sendable`.
public struct MetricsMiddleware: ImmediateMiddleware {
    let metrics: ServerMetrics

    public init(metrics: ServerMetrics) { self.metrics = metrics }

    public func handle(_ request: HTTPRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        let started = ContinuousClock.now
        let route = context.route ?? "unmatched"
        do {
            let response = try await next(request, context)
            record(route, request, response.status.code, started)
            return response
        } catch {
            record(route, request, HTTPError.from(error).status.code, started)
            throw error
        }
    }

    /// The same on the HTTP thread; a deferred request (`nil`) is counted when the async path
    /// answers it, never twice.
    public func handleImmediately(_ request: HTTPRequest, context: RequestContext, next: ImmediateNext) throws
        -> HTTPResponse?
    {
        let started = ContinuousClock.now
        let route = context.route ?? "unmatched"
        do {
            guard let response = try next(request, context) else { return nil }
            record(route, request, response.status.code, started)
            return response
        } catch {
            record(route, request, HTTPError.from(error).status.code, started)
            throw error
        }
    }

    private func record(_ route: String, _ request: HTTPRequest, _ status: Int, _ started: ContinuousClock.Instant) {
        metrics.recordRequest(
            route: route, method: request.method.rawValue, status: status,
            seconds: (ContinuousClock.now - started) / .seconds(1))
    }
}
