import AppStoreModels
import Storage
import Synchronization

/// The `AppRuntime` of every app, cached so that a request does not re-read and re-decode the
/// app's settings or rebuild its verifiers and App Store client.
///
/// Freshness: a change made through this process (`invalidate`) is seen by the next request.
/// A change made by another instance sharing the database is seen within `refreshInterval`:
/// after that long, the next use re-reads the app's row (one indexed read) and keeps the
/// runtime only if the record is unchanged. So the bound is `refreshInterval` plus one read.
///
/// A runtime is built from the record with its secrets opened (`StoredSecrets`); a secret that
/// does not open makes the app `appNotConfigured`.
/// - Note: Thread-safe: the cache sits behind a `Mutex`; runtimes are immutable.
public final class AppRuntimes: Sendable {
    private struct Entry {
        var runtime: AppRuntime
        /// The record as stored (secrets sealed), to compare with a fresh read.
        var stored: AppRecord
        var checkedAt: ContinuousClock.Instant
    }

    private let store: any Store
    private let clock: ServerClock
    private let connections: AppStoreConnectionFactory
    private let metrics: any IngestionMetrics
    public let refreshInterval: Duration
    /// Opens the apps' stored secrets; admin routes seal with it too.
    public let secrets: StoredSecrets
    private let entries = Mutex<[String: Entry]>([:])

    public init(
        store: any Store, clock: ServerClock, connections: @escaping AppStoreConnectionFactory,
        metrics: any IngestionMetrics = DiscardingIngestionMetrics(), refreshInterval: Duration = .seconds(1),
        secrets: StoredSecrets = .keyless
    ) {
        self.store = store
        self.clock = clock
        self.connections = connections
        self.metrics = metrics
        self.refreshInterval = refreshInterval
        self.secrets = secrets
    }

    /// The app's runtime; `appNotFound` for an unknown id, `appNotConfigured` for settings
    /// that cannot be read, `databaseUnavailable` when the store cannot answer.
    public func runtime(appId: String) async throws(IngestionError) -> AppRuntime {
        let now = ContinuousClock.now
        let cached = entries.withLock { $0[appId] }
        if let cached, now - cached.checkedAt < refreshInterval { return cached.runtime }
        let record: AppRecord?
        do {
            record = try await metrics.timed("read") { try await store.read { reader in try reader.app(id: appId) } }
        } catch {
            throw IngestionError.store(error)
        }
        return try remember(record, appId: appId, cached: cached, checkedAt: now)
    }

    /// `runtime(appId:)` on the calling thread (`Store.readBlocking` when the cache is stale):
    /// for the HTTP server's threads, never Swift's cooperative pool.
    public func runtimeBlocking(appId: String) throws(IngestionError) -> AppRuntime {
        let now = ContinuousClock.now
        let cached = entries.withLock { $0[appId] }
        if let cached, now - cached.checkedAt < refreshInterval { return cached.runtime }
        let record: AppRecord?
        do {
            record = try store.readBlocking { reader in try reader.app(id: appId) }
        } catch {
            throw IngestionError.store(error)
        }
        return try remember(record, appId: appId, cached: cached, checkedAt: now)
    }

    /// Keeps the cached runtime when the record is unchanged, else builds a new one.
    private func remember(_ record: AppRecord?, appId: String, cached: Entry?, checkedAt: ContinuousClock.Instant)
        throws(IngestionError) -> AppRuntime
    {
        guard let record else {
            entries.withLock { _ = $0.removeValue(forKey: appId) }
            throw IngestionError.appNotFound
        }
        let runtime: AppRuntime
        if let cached, cached.stored == record {
            runtime = cached.runtime
        } else {
            let opened: AppRecord
            do {
                opened = try secrets.opened(record)
            } catch {
                // Clients see this message: no key ids or field names (the startup log names the field).
                throw IngestionError(
                    .appNotConfigured, "The app's stored secrets cannot be opened with this server's secrets key.")
            }
            runtime = try AppRuntime(record: opened, clock: clock, connections: connections)
        }
        entries.withLock { $0[appId] = Entry(runtime: runtime, stored: record, checkedAt: checkedAt) }
        return runtime
    }

    /// Forgets the app's runtime: call after changing the app, so this process's next request
    /// reads the new record.
    public func invalidate(appId: String) {
        entries.withLock { _ = $0.removeValue(forKey: appId) }
    }
}
