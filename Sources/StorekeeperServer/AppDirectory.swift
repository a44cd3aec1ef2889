import HTTPServer
import Storage

/// Loads the app a request names, answering 404 `app_not_found` for an unknown id.
/// - Note: Immutable and `Sendable`.
struct AppDirectory: Sendable {
    let store: any Store
    let metrics: ServerMetrics

    func app(_ context: RequestContext) async throws -> AppRecord {
        let appId = try context.parameter("appId")
        let app = try await read { reader in try reader.app(id: appId) }
        guard let app else { throw HTTPError(status: .notFound, code: "app_not_found", message: "No such app.") }
        return app
    }

    func read<R: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> R) async throws -> R {
        do {
            return try await timed(metrics, "read") { try await store.read(body) }
        } catch {
            throw ErrorMapping.storeFailure(error)
        }
    }

    func write<R: Sendable>(_ operation: String, _ body: @escaping @Sendable (any StoreTransaction) throws -> R)
        async throws -> R
    {
        do {
            return try await timed(metrics, operation) { try await store.write(retries: 2, body) }
        } catch {
            throw ErrorMapping.storeFailure(error)
        }
    }
}
