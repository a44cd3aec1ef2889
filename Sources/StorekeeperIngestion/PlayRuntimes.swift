import Storage
import Synchronization

/// The `PlayRuntime` of every app with a Play side, cached like `AppRuntimes`: a change made
/// through this process (`invalidate`) is seen by the next request, one made by another
/// instance within `refreshInterval` plus one read (the settings row is re-read and the
/// runtime kept only when it is unchanged, so the access-token cache survives).
/// - Note: Thread-safe: the cache sits behind a `Mutex`; runtimes are immutable.
public final class PlayRuntimes: Sendable {
    private struct Entry {
        var runtime: PlayRuntime
        /// The settings as stored (key sealed), to compare with a fresh read.
        var stored: PlayAppSettings
        var checkedAt: ContinuousClock.Instant
    }

    private let store: any Store
    private let clock: ServerClock
    private let secrets: StoredSecrets
    public let service: PlayServiceConfiguration
    public let refreshInterval: Duration
    private let entries = Mutex<[String: Entry]>([:])

    public init(
        store: any Store, clock: ServerClock, secrets: StoredSecrets, service: PlayServiceConfiguration,
        refreshInterval: Duration = .seconds(1)
    ) {
        self.store = store
        self.clock = clock
        self.secrets = secrets
        self.service = service
        self.refreshInterval = refreshInterval
    }

    /// The app's Play runtime: `googlePlayNotConfigured` when the app has no Play side (an
    /// unknown app included: the caller checked the app first), `appNotConfigured` when its
    /// sealed key does not open, `databaseUnavailable` when the store cannot answer.
    public func runtime(appId: String) async throws(IngestionError) -> PlayRuntime {
        let now = ContinuousClock.now
        let cached = entries.withLock { $0[appId] }
        if let cached, now - cached.checkedAt < refreshInterval { return cached.runtime }
        let stored: PlayAppSettings?
        do {
            stored = try await store.read { reader in try reader.playAppSettings(appId: appId) }
        } catch {
            throw IngestionError.store(error)
        }
        guard let stored else {
            entries.withLock { _ = $0.removeValue(forKey: appId) }
            throw IngestionError(.googlePlayNotConfigured, "The app has no Google Play side.")
        }
        let runtime: PlayRuntime
        if let cached, cached.stored == stored {
            runtime = cached.runtime
        } else {
            let opened: PlayAppSettings
            do {
                opened = try secrets.opened(stored)
            } catch {
                throw IngestionError(
                    .appNotConfigured, "The app's stored secrets cannot be opened with this server's secrets key.")
            }
            runtime = try PlayRuntime(settings: opened, service: service, clock: clock)
        }
        entries.withLock { $0[appId] = Entry(runtime: runtime, stored: stored, checkedAt: now) }
        return runtime
    }

    /// Forgets the app's runtime: call after changing its Play side.
    public func invalidate(appId: String) {
        entries.withLock { _ = $0.removeValue(forKey: appId) }
    }
}
