import HTTPServer
import Storage
import StorekeeperIngestion

/// Finds the app a request names (from the runtime cache: no database read while it is fresh),
/// answering 404 `app_not_found` for an unknown id, and runs the store work of admin routes.
/// - Note: Immutable and `Sendable`.
struct AppDirectory: Sendable {
    let store: any Store
    let metrics: ServerMetrics
    let runtimes: AppRuntimes

    /// The app's runtime (settings decoded, verifiers and App Store client ready).
    func app(_ context: RequestContext) async throws -> AppRuntime {
        let appId = try context.parameter("appId")
        do {
            return try await runtimes.runtime(appId: appId)
        } catch {
            throw ErrorMapping.ingestionFailure(error)
        }
    }

    /// `app(_:)` on the HTTP thread (immediate routes).
    func appBlocking(_ context: RequestContext) throws -> AppRuntime {
        let appId = try context.parameter("appId")
        do {
            return try runtimes.runtimeBlocking(appId: appId)
        } catch {
            throw ErrorMapping.ingestionFailure(error)
        }
    }

    /// `read(_:)` on the HTTP thread (immediate routes): a short local read, no hop.
    func readBlocking<R>(_ body: (any StoreReader) throws -> R) throws -> R {
        let started = ContinuousClock.now
        defer { metrics.recordDatabase(operation: "read", since: started) }
        do {
            return try store.readBlocking(body)
        } catch {
            throw ErrorMapping.storeFailure(error)
        }
    }

    /// The app's stored record, read now (admin routes show and change the truth, not a cache).
    func record(_ context: RequestContext) async throws -> AppRecord {
        let appId = try context.parameter("appId")
        let app = try await read { reader in try reader.app(id: appId) }
        guard let app else { throw ErrorMapping.ingestionFailure(.appNotFound) }
        return app
    }

    func read<R: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> R) async throws -> R {
        do {
            return try await metrics.timed("read") { try await store.read(body) }
        } catch {
            throw ErrorMapping.storeFailure(error)
        }
    }

    func write<R: Sendable>(_ operation: String, _ body: @escaping @Sendable (any StoreTransaction) throws -> R)
        async throws -> R
    {
        do {
            return try await metrics.timed(operation) { try await store.write(retries: 2, body) }
        } catch {
            throw ErrorMapping.storeFailure(error)
        }
    }
}
