import AppStoreModels
import HTTPServer
import Storage
import StorekeeperIngestion

/// Liveness, readiness, metrics and the OpenAPI document.
/// - Note: Immutable and `Sendable`.
struct OperationsController: Sendable {
    let store: any Store
    let metrics: ServerMetrics
    let clock: ServerClock
    /// Its group-commit counters are reported with the metrics.
    let writer: IngestionWriter
    /// Set once the routes are known (the document describes every route, this one included).
    let openAPI: @Sendable () -> JSONValue

    struct Health: Encodable {
        var status: String
    }

    struct Readiness: Encodable {
        var status: String
        var database: String
        var migrations: String
        var missingMigrations: [String]
    }

    var routes: [APIRoute] {
        [
            APIRoute(
                .get, "/healthz", access: .open, operationId: "health", summary: "The process is up.",
                tag: "operations", responses: [200: "Health"], immediate: health),
            APIRoute(
                .get, "/readyz", access: .open, operationId: "readiness",
                summary: "The database is reachable and its migrations are current.", tag: "operations",
                responses: [200: "Readiness", 503: "Readiness"], handler: readiness),
            APIRoute(
                .get, "/metrics", access: .open, operationId: "metrics", summary: "Prometheus metrics.",
                tag: "operations", responses: [200: "PrometheusText"], handler: metricsText),
            APIRoute(
                .get, "/openapi.json", access: .open, operationId: "openAPI", summary: "This API as OpenAPI 3.1.",
                tag: "operations", responses: [200: "OpenAPIDocument"], immediate: document),
        ]
    }

    /// Encoded once: a liveness probe should cost the HTTP core and nothing else.
    static let healthBody = AppStoreJSON.encode(Health(status: "ok"))

    @Sendable func health(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        HTTPResponse.json(data: Self.healthBody)
    }

    @Sendable func readiness(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let expected = Migration.all.map(\.identifier)
        do {
            let applied = try await metrics.timed("read") { try await store.read { try $0.appliedMigrations() } }
            let missing = expected.filter { !applied.contains($0) }
            let unknown = applied.filter { !expected.contains($0) }
            let ready = missing.isEmpty && unknown.isEmpty
            return JSONResponse.make(
                Readiness(
                    status: ready ? "ready" : "not_ready", database: "ok",
                    migrations: missing.isEmpty ? (unknown.isEmpty ? "current" : "newer_than_binary") : "pending",
                    missingMigrations: missing),
                status: ready ? .ok : .serviceUnavailable)
        } catch {
            return JSONResponse.make(
                Readiness(status: "not_ready", database: "unreachable", migrations: "unknown", missingMigrations: []),
                status: .serviceUnavailable)
        }
    }

    @Sendable func metricsText(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        var text = metrics.render()
        // The true backlog comes from the outbox itself, so it is right whichever instance
        // delivers and even when no worker runs.
        if let backlog = try? await metrics.timed("outbox_backlog", { try await store.read { try $0.outboxBacklog() } })
        {
            let now = clock.now()
            let age =
                backlog.oldestCreatedAt.map {
                    max(0, Double(now.millisecondsSince1970 - $0.millisecondsSince1970) / 1000)
                } ?? 0
            text += """
                # HELP storekeeper_outbox_backlog Webhook deliveries neither delivered nor dead-lettered.
                # TYPE storekeeper_outbox_backlog gauge
                storekeeper_outbox_backlog \(backlog.pending)
                # HELP storekeeper_outbox_backlog_oldest_age_seconds Age of the oldest pending webhook delivery.
                # TYPE storekeeper_outbox_backlog_oldest_age_seconds gauge
                storekeeper_outbox_backlog_oldest_age_seconds \(String(format: "%.3f", age))

                """
        }
        let grouping = writer.statistics
        text += """
            # HELP storekeeper_ingestion_batches_total Ingestions committed (or refused) by the group-commit writer.
            # TYPE storekeeper_ingestion_batches_total counter
            storekeeper_ingestion_batches_total \(grouping.batches)
            # HELP storekeeper_ingestion_retries_total Ingestions taken again after a retryable conflict.
            # TYPE storekeeper_ingestion_retries_total counter
            storekeeper_ingestion_retries_total \(grouping.retries)
            # HELP storekeeper_ingestion_groups_total Groups the writer committed them in (a group written again in savepoints counts once).
            # TYPE storekeeper_ingestion_groups_total counter
            storekeeper_ingestion_groups_total \(grouping.groups)
            # HELP storekeeper_ingestion_isolated_groups_total Groups written again, each ingestion in a savepoint, after one failed.
            # TYPE storekeeper_ingestion_isolated_groups_total counter
            storekeeper_ingestion_isolated_groups_total \(grouping.isolatedGroups)
            # HELP storekeeper_ingestion_largest_group Most ingestions one transaction held.
            # TYPE storekeeper_ingestion_largest_group gauge
            storekeeper_ingestion_largest_group \(grouping.largestGroup)

            """
        var response = HTTPResponse.text(text)
        response.headers["Content-Type"] = "text/plain; version=0.0.4; charset=utf-8"
        return response
    }

    @Sendable func document(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        JSONResponse.make(openAPI())
    }
}
