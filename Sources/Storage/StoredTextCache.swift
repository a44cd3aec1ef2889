import Synchronization

/// Values made from stored text (decoded JSON, or what a write encoded), kept by key with the
/// exact text they came from: a value is handed out only when the text the caller reads now is
/// byte for byte that text, so whatever another instance wrote or a rolled-back transaction left
/// is decoded afresh, never believed.
///
/// Bounded by the bytes of text it keeps (the values are of the same order) and by a number of
/// entries: a text over an eighth of the budget is not kept; past either bound, entries go (any
/// of them) until `bytesAfterEviction` is reached, 0 to start over.
/// - Note: Thread-safe: entries sit behind a `Mutex`; decoding and comparing happen outside it.
final class StoredTextCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entries {
        var byKey: [Key: (text: String, value: Value)] = [:]
        var bytes = 0
    }

    let byteBudget: Int
    let capacity: Int
    let bytesAfterEviction: Int
    private let entries = Mutex(Entries())

    init(byteBudget: Int, capacity: Int = .max, bytesAfterEviction: Int = 0) {
        self.byteBudget = byteBudget
        self.capacity = capacity
        self.bytesAfterEviction = bytesAfterEviction
    }

    /// The value kept for `key` if it was made from exactly `text`.
    func value(_ key: Key, text: String) -> Value? {
        guard let entry = entries.withLock({ $0.byKey[key] }), StoredText.sameBytes(entry.text, text) else {
            return nil
        }
        return entry.value
    }

    /// The value of `text` (stored under `key`), decoded only when it is not the text last kept
    /// for `key`.
    func value(_ key: Key, text: String, decode: (String) throws(StoreError) -> Value) throws(StoreError) -> Value {
        if let known = value(key, text: text) { return known }
        let decoded = try decode(text)
        remember(decoded, text: text, for: key)
        return decoded
    }

    /// Keeps `value`, made from (or stored as) `text`, for `key`.
    func remember(_ value: Value, text: String, for key: Key) {
        let size = text.utf8.count
        entries.withLock { entries in
            if let old = entries.byKey.removeValue(forKey: key) { entries.bytes -= old.text.utf8.count }
            guard capacity > 0, size <= byteBudget / 8 else { return }
            if entries.byKey.count >= capacity || entries.bytes + size > byteBudget {
                while let victim = entries.byKey.first,
                    entries.byKey.count >= capacity || entries.bytes + size > bytesAfterEviction
                {
                    entries.byKey.removeValue(forKey: victim.key)
                    entries.bytes -= victim.value.text.utf8.count
                }
            }
            entries.byKey[key] = (text, value)
            entries.bytes += size
        }
    }

    func forget(_ key: Key) {
        entries.withLock { entries in
            if let old = entries.byKey.removeValue(forKey: key) { entries.bytes -= old.text.utf8.count }
        }
    }

    func removeAll() {
        entries.withLock { $0 = Entries() }
    }

    /// The text kept now (tests).
    var keptBytes: Int { entries.withLock { $0.bytes } }
}
