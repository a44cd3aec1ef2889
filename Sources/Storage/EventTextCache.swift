import Entitlements
import Synchronization

/// The stored text of lifecycle events, kept by value: re-evaluating a customer with a long
/// history hands every standing event to `reviseEvents`, and encoding each of them again only
/// to find its text unchanged was most of that step's cost.
///
/// Keyed by the event's value itself, so a hit is the text encoding gives for that value
/// (encoding is a pure function of it); nothing stored is trusted here.
/// - Note: Thread-safe: entries sit behind a `Mutex`.
final class EventTextCache: Sendable {
    struct Key: Hashable, Sendable {
        var customerId: Int64
        var eventId: String
    }

    /// The most events kept; past it the cache starts over.
    let capacity: Int
    /// One event and its text, by reference: a lookup then copies a pointer, not the event's
    /// dozen strings (every standing event of a long history is looked up at each revision).
    private final class Entry: Sendable {
        let event: LifecycleEvent
        let text: String

        init(event: LifecycleEvent, text: String) {
            self.event = event
            self.text = text
        }
    }

    private let entries = Mutex([Key: Entry]())

    init(capacity: Int = 50_000) {
        self.capacity = capacity
    }

    static let shared = EventTextCache()

    /// The stored text of `event` (`SQLStoreTransaction.jsonText`), encoded only when this
    /// value was not encoded before.
    func text(of event: LifecycleEvent, customerId: Int64) -> String {
        let key = Key(customerId: customerId, eventId: event.id)
        if let known = entries.withLock({ $0[key] }), known.event == event { return known.text }
        let text = SQLStoreTransaction.jsonText(event)
        guard capacity > 0 else { return text }
        entries.withLock { entries in
            if entries[key] == nil, entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(event: event, text: text)
        }
        return text
    }
}

/// The text each lifecycle event is stored as, for `StoreTransaction.reviseEvents`: a caller
/// works it out where it has time (a long history's few hundred standing events took half of
/// the revision's time on the store's thread, after the state was worked out).
public enum StoredEventText {
    /// `events`' stored texts in order, encoded only for values not encoded before.
    public static func of(_ events: [LifecycleEvent], customerId: Int64) -> [String] {
        events.map { EventTextCache.shared.text(of: $0, customerId: customerId) }
    }
}

extension StoreTransaction {
    /// `reviseEvents(_:texts:customerId:)` with the texts worked out here.
    @discardableResult
    public func reviseEvents(_ events: [LifecycleEvent], customerId: Int64) throws -> Int {
        try reviseEvents(events, texts: StoredEventText.of(events, customerId: customerId), customerId: customerId)
    }
}
