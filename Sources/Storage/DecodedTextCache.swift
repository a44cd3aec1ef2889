import Synchronization

/// Small stored JSON documents that every ingestion of an app reads (its product catalog, its
/// analytics settings), kept decoded: a hit is a value decoded from exactly the text read now,
/// so a change made by another instance, or a rolled-back one, is decoded afresh.
/// - Note: Thread-safe: entries sit behind a `Mutex`; decoding happens outside it.
final class DecodedTextCache<Value: Sendable>: Sendable {
    /// The most documents kept; past it the cache starts over.
    let capacity: Int
    private let entries = Mutex([String: (text: String, value: Value)]())

    init(capacity: Int = 1_024) {
        self.capacity = capacity
    }

    /// The value of `text` (stored under `key`), decoded only when it is not the text last
    /// decoded for `key`.
    func value(_ key: String, text: String, decode: (String) throws(StoreError) -> Value) throws(StoreError) -> Value {
        if let known = entries.withLock({ $0[key] }), StoredText.sameBytes(known.text, text) { return known.value }
        let value = try decode(text)
        guard capacity > 0 else { return value }
        entries.withLock { entries in
            if entries[key] == nil, entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = (text, value)
        }
        return value
    }
}
