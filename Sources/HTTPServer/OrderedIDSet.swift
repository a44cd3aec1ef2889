/// Connection ids in the order they were appended: O(1) append, removal by id and oldest.
///
/// A doubly linked list threaded through a dictionary (id → neighbours), so that a connection
/// leaving its queue in the middle (its request head arrived, or it closed) costs no scan.
/// - Note: Value type; not shared between threads (it lives inside `ConnectionTable`).
struct OrderedIDSet {
    private struct Links {
        var previous: UInt64?
        var next: UInt64?
    }

    private var links: [UInt64: Links] = [:]
    /// The id appended longest ago.
    private(set) var first: UInt64?
    private var last: UInt64?

    var count: Int { links.count }
    var isEmpty: Bool { links.isEmpty }

    func contains(_ id: UInt64) -> Bool { links[id] != nil }

    /// Appends `id` as the newest; an id already present is moved to the end.
    mutating func append(_ id: UInt64) {
        remove(id)
        links[id] = Links(previous: last, next: nil)
        if let last { links[last]?.next = id } else { first = id }
        last = id
    }

    /// Removes `id`; returns whether it was present.
    @discardableResult
    mutating func remove(_ id: UInt64) -> Bool {
        guard let removed = links.removeValue(forKey: id) else { return false }
        if let previous = removed.previous { links[previous]?.next = removed.next } else { first = removed.next }
        if let next = removed.next { links[next]?.previous = removed.previous } else { last = removed.previous }
        return true
    }

    /// Every id, oldest first (for tests and small sets).
    var elements: [UInt64] {
        var result: [UInt64] = []
        result.reserveCapacity(links.count)
        var cursor = first
        while let id = cursor {
            result.append(id)
            cursor = links[id]?.next
        }
        return result
    }

    /// The oldest id that is not `excluded`.
    func first(excluding excluded: UInt64) -> UInt64? {
        guard let first else { return nil }
        return first != excluded ? first : links[first]?.next
    }
}
