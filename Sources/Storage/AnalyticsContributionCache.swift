import AppStoreModels
import Entitlements

/// Decoded customer contributions to the daily analytics rows, kept between ingestions with the
/// encoded text of each entry, so that a customer with a long history (thousands of daily
/// entries) is neither decoded nor encoded whole on each new fact: only the entries that
/// changed are. Checked by content like every `StoredTextCache`: a contribution is used only for
/// the very text the transaction reads now.
enum AnalyticsContributionCache {
    struct Key: Hashable, Sendable {
        var customerId: Int64
        var environment: String
    }

    /// One stored contribution: its entries in key order, each key once, with the text each
    /// was stored as when known (nil for a contribution decoded from the store). Arrays in key
    /// order rather than tables by key: the next contribution is compared with this one in a
    /// single walk over both, where looking every key up several times (each lookup hashing
    /// it and comparing its four strings) was most of the comparison for a long history.
    struct Entry: Sendable {
        var keys: [AnalyticsDailyKey] = []
        var measures: [AnalyticsMeasures] = []
        var fragments: [String?] = []
    }

    /// 32 MiB of stored text, all customers together (a customer's decoded entries and their
    /// texts take about twice its text again); past it, entries go until a quarter is free.
    static func make(byteBudget: Int = 32 << 20) -> StoredTextCache<Key, Entry> {
        StoredTextCache(byteBudget: byteBudget, bytesAfterEviction: byteBudget * 3 / 4)
    }

    static let shared = make()
}
