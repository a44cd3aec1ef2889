import Storage
import Synchronization

/// Stored API keys recently found valid, by hash, so that a request does not read its key's row
/// every time (the key read was one of the two database reads of every GET of CustomerInfo).
///
/// Only keys found and not revoked are kept, and each for at most `refreshInterval` (the
/// server's `appRefreshMilliseconds`, 1 s by default; 0 keeps none): a new key works at once,
/// and a key revoked through this instance is refused at once (`removeAll()` after each
/// revocation); revoked through another instance sharing the database, it is refused within
/// that bound, as an app's changed configuration is.
/// - Note: Thread-safe: entries sit behind a `Mutex`.
public final class APIKeyCache: Sendable {
    /// The most keys kept; past it the cache starts over.
    static let capacity = 10_000

    private struct Entries {
        var records: [String: (record: APIKeyRecord, checkedAt: ContinuousClock.Instant)] = [:]
        /// The last `removeAll()`: a read begun before it may have seen a key it revoked.
        var clearedAt: ContinuousClock.Instant?
    }

    public let refreshInterval: Duration
    private let entries = Mutex(Entries())

    public init(refreshInterval: Duration) {
        self.refreshInterval = refreshInterval
    }

    /// The valid key with this hash read within the interval, if any.
    func record(hash: String, now: ContinuousClock.Instant = .now) -> APIKeyRecord? {
        guard refreshInterval > .zero, let entry = entries.withLock({ $0.records[hash] }) else { return nil }
        return now - entry.checkedAt < refreshInterval ? entry.record : nil
    }

    /// Keeps `record`, read from the store at `checkedAt`, when it is a valid key.
    func remember(_ record: APIKeyRecord?, hash: String, checkedAt: ContinuousClock.Instant) {
        guard refreshInterval > .zero, let record, record.revokedAt == nil, record.hash == hash else { return }
        entries.withLock { entries in
            if let clearedAt = entries.clearedAt, checkedAt <= clearedAt { return }
            if entries.records[hash] == nil, entries.records.count >= Self.capacity {
                entries.records.removeAll(keepingCapacity: true)
            }
            entries.records[hash] = (record, checkedAt)
        }
    }

    /// Forgets every key: after a revocation, so that it takes effect here at once.
    public func removeAll(now: ContinuousClock.Instant = .now) {
        entries.withLock { entries in
            entries.records.removeAll()
            entries.clearedAt = now
        }
    }
}
