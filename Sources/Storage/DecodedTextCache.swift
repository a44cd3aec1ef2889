import Synchronization

/// Small stored JSON documents that every ingestion of an app reads (its product catalog, its
/// analytics settings), kept decoded: a hit is a value decoded from exactly the text read now,
/// so a change made by another instance, or a rolled-back one, is decoded afresh.
///
/// Bounded by the bytes of text it keeps (the decoded values are of the same order): a text
/// over an eighth of the budget is decoded every time and not kept (analytics settings may
/// hold 10,000 exchange rates); past the budget, or past `capacity` documents, it starts over.
/// - Note: Thread-safe: entries sit behind a `Mutex`; decoding happens outside it.
final class DecodedTextCache<Value: Sendable>: Sendable {
    private struct Entries {
        var values: [String: (text: String, value: Value)] = [:]
        var keptBytes = 0
    }

    /// The most documents kept.
    let capacity: Int
    /// The most bytes of text kept.
    let byteBudget: Int
    private let entries = Mutex(Entries())

    init(capacity: Int = 1_024, byteBudget: Int = 16 << 20) {
        self.capacity = capacity
        self.byteBudget = byteBudget
    }

    /// Bytes of text kept now.
    var keptBytes: Int { entries.withLock { $0.keptBytes } }

    /// The value of `text` (stored under `key`), decoded only when it is not the text last
    /// decoded for `key`.
    func value(_ key: String, text: String, decode: (String) throws(StoreError) -> Value) throws(StoreError) -> Value {
        if let known = entries.withLock({ $0.values[key] }), StoredText.sameBytes(known.text, text) {
            return known.value
        }
        let value = try decode(text)
        let size = text.utf8.count
        guard capacity > 0, size <= byteBudget / 8 else { return value }
        entries.withLock { entries in
            if let replaced = entries.values.removeValue(forKey: key) { entries.keptBytes -= replaced.text.utf8.count }
            if entries.values.count >= capacity || entries.keptBytes + size > byteBudget {
                entries.values.removeAll(keepingCapacity: true)
                entries.keptBytes = 0
            }
            entries.values[key] = (text, value)
            entries.keptBytes += size
        }
        return value
    }
}
