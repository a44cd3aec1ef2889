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

    /// The most stored text kept, all customers together (a customer's decoded entries and
    /// their texts take about twice its text again); a contribution larger than an eighth of
    /// it is not kept. Past it, entries go until a quarter of the budget is free.
    let byteBudget: Int
    private let entries = Mutex(Entries())

    private struct Entries {
        var byKey: [Key: Entry] = [:]
        var bytes = 0
    }

    init(byteBudget: Int = 32 << 20) {
        self.byteBudget = byteBudget
    }

    static let shared = AnalyticsContributionCache()

    /// The entry made from exactly `json`, if any.
    func entry(_ key: Key, json: String) -> Entry? {
        guard let entry = entries.withLock({ $0.byKey[key] }), StoredText.sameBytes(entry.json, json) else {
            return nil
        }
        return entry
    }

    func remember(_ entry: Entry, for key: Key) {
        let size = entry.json.utf8.count
        entries.withLock { entries in
            if let old = entries.byKey.removeValue(forKey: key) { entries.bytes -= old.json.utf8.count }
            guard size <= byteBudget / 8 else { return }
            if entries.bytes + size > byteBudget {
                // Any entries, not all: what stays is still checked by its bytes when used.
                while let victim = entries.byKey.first, entries.bytes + size > byteBudget * 3 / 4 {
                    entries.byKey.removeValue(forKey: victim.key)
                    entries.bytes -= victim.value.json.utf8.count
                }
            }
            entries.byKey[key] = entry
            entries.bytes += size
        }
    }

    func forget(_ key: Key) {
        entries.withLock { entries in
            if let old = entries.byKey.removeValue(forKey: key) { entries.bytes -= old.json.utf8.count }
        }
    }

    func removeAll() {
        entries.withLock { $0 = Entries() }
    }

    /// The stored text kept now (tests).
    var keptBytes: Int { entries.withLock { $0.bytes } }
}
