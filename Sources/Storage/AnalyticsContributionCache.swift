import AppStoreModels
import Entitlements
import Synchronization

/// Decoded customer contributions to the daily analytics rows, kept between ingestions with the
/// encoded text of each entry, so that a customer with a long history (thousands of daily
/// entries) is neither decoded nor encoded whole on each new fact: only the entries that
/// changed are.
///
/// Checked by content, never trusted: an entry is used only when the text the transaction
/// reads now is byte for byte the text it was made from, so whatever another instance wrote or
/// a rolled-back transaction left, the contribution handed out is the one decoding gives.
/// - Note: Thread-safe: entries sit behind a `Mutex`; comparing happens outside it.
final class AnalyticsContributionCache: Sendable {
    struct Key: Hashable, Sendable {
        var customerId: Int64
        var environment: String
    }

    /// One stored contribution: its text, and each entry's measures and encoded text.
    struct Entry: Sendable {
        var json: String
        var measures: [AnalyticsDailyKey: AnalyticsMeasures]
        var fragments: [AnalyticsDailyKey: String]
    }

    /// The most customers kept; past it the cache starts over (the next use of each decodes).
    let capacity: Int
    private let entries = Mutex([Key: Entry]())

    init(capacity: Int = 2_000) {
        self.capacity = capacity
    }

    static let shared = AnalyticsContributionCache()

    /// The entry made from exactly `json`, if any.
    func entry(_ key: Key, json: String) -> Entry? {
        guard let entry = entries.withLock({ $0[key] }), StoredText.sameBytes(entry.json, json) else { return nil }
        return entry
    }

    func remember(_ entry: Entry, for key: Key) {
        guard capacity > 0 else { return }
        entries.withLock { entries in
            if entries[key] == nil, entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
    }

    func forget(_ key: Key) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    func removeAll() {
        entries.withLock { $0.removeAll() }
    }
}
