/// A value type's stored members behind one reference that copies share until one of them
/// changes (copy on write). For the values an evaluation copies many times over
/// (`TransactionFact`, `LifecycleEvent`): inline, each copy moved a few hundred bytes and
/// retained every string member; shared, it retains one reference.
///
/// Equality, hashing and coding are the members' own, coded in the same container, so a type
/// that kept its members inline before reads and writes the same JSON.
/// - Note: Value semantics; `Sendable`.
struct SharedMembers<Members: Sendable & Hashable & Codable>: Sendable, Hashable, Codable {
    /// `@unchecked Sendable`: `value` changes only through `SharedMembers.value`'s `_modify`,
    /// after a box that another copy still references has been copied, so no box that another
    /// copy (or thread) can see ever changes.
    private final class Box: @unchecked Sendable {
        var value: Members

        init(_ value: Members) {
            self.value = value
        }
    }

    private var box: Box

    init(_ value: Members) {
        box = Box(value)
    }

    var value: Members {
        _read { yield box.value }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
            yield &box.value
        }
    }

    static func == (lhs: SharedMembers, rhs: SharedMembers) -> Bool {
        lhs.box === rhs.box || lhs.box.value == rhs.box.value
    }

    func hash(into hasher: inout Hasher) {
        box.value.hash(into: &hasher)
    }

    init(from decoder: any Decoder) throws {
        box = Box(try Members(from: decoder))
    }

    func encode(to encoder: any Encoder) throws {
        try box.value.encode(to: encoder)
    }
}
