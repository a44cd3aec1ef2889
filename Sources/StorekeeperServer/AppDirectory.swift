import HTTPServer
import SecretSealing
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

    /// `app` with its secrets sealed for storage.
    func sealed(_ app: AppRecord) throws -> AppRecord {
        do {
            return try runtimes.secrets.sealed(app)
        } catch {
            throw Self.sealingFailure(error)
        }
    }

    /// The app's Google Play side with its service-account key sealed for storage.
    func sealed(_ settings: PlayAppSettings) throws -> PlayAppSettings {
        do {
            return try runtimes.secrets.sealed(settings)
        } catch {
            throw Self.sealingFailure(error)
        }
    }

    /// `endpoint` with its signing secret sealed for storage.
    func sealed(_ endpoint: WebhookEndpoint) throws -> WebhookEndpoint {
        do {
            return try runtimes.secrets.sealed(endpoint)
        } catch {
            throw Self.sealingFailure(error)
        }
    }

    /// 409 `secrets_key_missing` when the server has no key (it never stores a secret in
    /// clear); 409 `app_not_configured` when a stored secret it must keep does not open.
    static func sealingFailure(_ error: SecretsError) -> HTTPError {
        switch error.code {
        case .keyMissing:
            return HTTPError(
                status: .conflict, code: "secrets_key_missing",
                message: "This server has no secrets key configured, so it cannot store secrets "
                    + "(STOREKEEPER_SECRETS_KEY or STOREKEEPER_SECRETS_KEY_FILE; docs/server.md, Secrets at rest).")
        case .tooLarge:
            return .badRequest("A secret is too large.", code: "invalid_body")
        case .unknownKey, .authenticationFailed, .malformed:
            return HTTPError(
                status: .conflict, code: "app_not_configured",
                message: "The app's stored secrets cannot be opened with this server's secrets key.")
        default:
            return .internalError()
        }
    }
}
