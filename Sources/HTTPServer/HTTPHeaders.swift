/// An ordered list of HTTP header fields with case-insensitive name lookup.
///
/// Field order and repeated fields are preserved as received or added; lookups compare names
/// ASCII-case-insensitively, as RFC 9110 requires.
/// - Note: Immutable value semantics; `Sendable`.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field as sent or to be sent.
    /// - Note: Immutable value; `Sendable`.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field]

    public init() {
        self.fields = []
    }

    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { Field(name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The first value of the named field, or `nil`; setting replaces every field of that name
    /// (setting `nil` removes them).
    public subscript(name: String) -> String? {
        get { fields.first { Self.same($0.name, name) }?.value }
        set {
            if let newValue {
                replaceOrAdd(name: name, value: newValue)
            } else {
                remove(name: name)
            }
        }
    }

    /// Every value of the named field, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.same($0.name, name) }.map(\.value)
    }

    /// Whether a field with this name is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.same($0.name, name) }
    }

    /// Appends a field, keeping any existing fields of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field of this name by one field with `value`.
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field of this name.
    public mutating func remove(name: String) {
        fields.removeAll { Self.same($0.name, name) }
    }

    /// Room for `count` fields without reallocating.
    mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    static func same(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        var right = rhs.utf8.makeIterator()
        for byte in lhs.utf8 {
            guard let other = right.next(), asciiLower(byte) == asciiLower(other) else { return false }
        }
        return true
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte + 0x20 : byte
    }
}
