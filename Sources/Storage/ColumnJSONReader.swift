import Foundation

/// Reads the store's `…_json` columns back: what `AppStoreJSON.decode` gives, without
/// Foundation's `JSONDecoder`, which made decoding a customer's stored facts, state and
/// analytics contributions the largest part of the single SQLite writer's time per ingestion
/// after storing the rows themselves (15% in the POST profile).
///
/// It answers only when every step of the decoding stayed within what it reads exactly like
/// Foundation: strict JSON; strings, booleans, integers written as plain integers, nil; keyed,
/// unkeyed and single-value containers, nested ones too. Anything else (a number with a fraction
/// or an exponent, floating point, 128-bit integers, `Date`, `Data`, `URL`, `Decimal`, a super
/// decoder, a key written with escapes or outside ASCII (Swift compares strings by canonical
/// equivalence, this reader by bytes), a missing key, a value of another type, a repeated key)
/// makes it give up, even when the decoded type caught the error and went on, and the text is decoded by
/// Foundation instead: whatever it returns is what Foundation would have returned.
/// - Note: Stateless; each call parses into its own document.
enum ColumnJSONReader {
    /// `text` decoded as `T`, or `nil` when Foundation must decode it.
    static func decode<T: Decodable>(_ type: T.Type, from text: String) -> T? {
        guard let document = ColumnJSONDocument(text) else { return nil }
        guard let value = try? ColumnJSONDecoder.decode(T.self, document: document, node: 0), !document.gaveUp
        else { return nil }
        return value
    }
}

/// Why the reader gave up; never leaves `ColumnJSONReader.decode`.
struct ColumnJSONUnsupported: Error {}

/// A parsed JSON text: its values in document order, each with the index of the value after it,
/// so a container skips a member's subtree in one step.
/// - Note: Not thread-safe; lives for one `ColumnJSONReader.decode`.
final class ColumnJSONDocument {
    enum Kind: UInt8 {
        case null, bool, integer, otherNumber, string, array, object
    }

    struct Node {
        var kind: Kind
        /// A string with a backslash in it.
        var escaped = false
        /// A boolean's value; for a string, whether it holds a byte outside ASCII.
        var flag = false
        /// A string's bytes (between its quotes).
        var start: Int32 = 0
        var end: Int32 = 0
        /// An array's elements; an object's members (each a key node then a value).
        var count: Int32 = 0
        /// The node after this value and everything in it.
        var next: Int32 = 0
        var integer: Int64 = 0
    }

    static let maximumDepth = 128

    let bytes: [UInt8]
    let nodes: [Node]
    /// Set by every step that gives up, whether or not the decoded type catches its error.
    var gaveUp = false

    init?(_ text: String) {
        bytes = Array(text.utf8)
        var nodes: [Node] = []
        nodes.reserveCapacity(bytes.count / 12 + 4)
        var parser = Parser(bytes: bytes)
        guard parser.value(into: &nodes, depth: 0), parser.atEndAfterWhitespace() else { return nil }
        self.nodes = nodes
    }

    func fail() -> ColumnJSONUnsupported {
        gaveUp = true
        return ColumnJSONUnsupported()
    }

    /// The member values of object `node` by key bytes: (key start, key end, value node).
    func members(of node: Int) throws(ColumnJSONUnsupported) -> [(start: Int32, end: Int32, value: Int)] {
        let object = nodes[node]
        guard object.kind == .object else { throw fail() }
        var result: [(start: Int32, end: Int32, value: Int)] = []
        result.reserveCapacity(Int(object.count))
        var index = node + 1
        for _ in 0..<object.count {
            let key = nodes[index]
            // Keys are compared as bytes: one written with escapes, or outside ASCII (which
            // Swift may find equal to another spelling), is left to Foundation.
            guard !key.escaped, !key.flag else { throw fail() }
            result.append((key.start, key.end, index + 1))
            index = Int(nodes[index + 1].next)
        }
        return result
    }

    func string(_ node: Int) throws(ColumnJSONUnsupported) -> String {
        let value = nodes[node]
        guard value.kind == .string else { throw fail() }
        let range = Int(value.start)..<Int(value.end)
        if !value.escaped { return String(decoding: bytes[range], as: UTF8.self) }
        guard let text = Self.unescape(bytes[range]) else { throw fail() }
        return text
    }

    func integer<I: FixedWidthInteger>(_ node: Int, as type: I.Type) throws(ColumnJSONUnsupported) -> I {
        let value = nodes[node]
        guard value.kind == .integer, let exact = I(exactly: value.integer) else { throw fail() }
        return exact
    }

    func bool(_ node: Int) throws(ColumnJSONUnsupported) -> Bool {
        let value = nodes[node]
        guard value.kind == .bool else { throw fail() }
        return value.flag
    }

    /// The text of an escaped JSON string; `nil` for a lone surrogate.
    static func unescape(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        func hex(_ at: Int) -> UInt32? {
            guard at + 4 <= bytes.endIndex else { return nil }
            var value: UInt32 = 0
            for byte in bytes[at..<at + 4] {
                let digit: UInt8
                switch byte {
                case 0x30...0x39: digit = byte - 0x30
                case 0x41...0x46: digit = byte - 0x41 + 10
                case 0x61...0x66: digit = byte - 0x61 + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        while index < bytes.endIndex {
            let byte = bytes[index]
            guard byte == 0x5C else {
                out.append(byte)
                index += 1
                continue
            }
            let escape = bytes[index + 1]
            index += 2
            switch escape {
            case 0x22, 0x5C, 0x2F: out.append(escape)
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0C)
            case 0x6E: out.append(0x0A)
            case 0x72: out.append(0x0D)
            case 0x74: out.append(0x09)
            case 0x75:
                guard var scalar = hex(index) else { return nil }
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 6 <= bytes.endIndex, bytes[index] == 0x5C, bytes[index + 1] == 0x75,
                        let low = hex(index + 2), (0xDC00...0xDFFF).contains(low)
                    else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                out.append(contentsOf: String(Character(unicode)).utf8)
            default: return nil
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A strict JSON parser (RFC 8259) into `nodes`.
    struct Parser {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func atEndAfterWhitespace() -> Bool {
            skipWhitespace()
            return index == bytes.count
        }

        mutating func value(into nodes: inout [Node], depth: Int) -> Bool {
            skipWhitespace()
            guard index < bytes.count, depth <= ColumnJSONDocument.maximumDepth else { return false }
            let position = nodes.count
            switch bytes[index] {
            case 0x22:
                guard let node = string() else { return false }
                nodes.append(node)
            case 0x7B:
                index += 1
                nodes.append(Node(kind: .object))
                var count: Int32 = 0
                skipWhitespace()
                if index < bytes.count, bytes[index] == 0x7D {
                    index += 1
                } else {
                    while true {
                        skipWhitespace()
                        guard index < bytes.count, bytes[index] == 0x22, var key = string() else { return false }
                        key.next = Int32(nodes.count + 1)
                        nodes.append(key)
                        skipWhitespace()
                        guard index < bytes.count, bytes[index] == 0x3A else { return false }
                        index += 1
                        guard value(into: &nodes, depth: depth + 1) else { return false }
                        count += 1
                        skipWhitespace()
                        guard index < bytes.count else { return false }
                        if bytes[index] == 0x2C {
                            index += 1
                            continue
                        }
                        guard bytes[index] == 0x7D else { return false }
                        index += 1
                        break
                    }
                }
                nodes[position].count = count
            case 0x5B:
                index += 1
                nodes.append(Node(kind: .array))
                var count: Int32 = 0
                skipWhitespace()
                if index < bytes.count, bytes[index] == 0x5D {
                    index += 1
                } else {
                    while true {
                        guard value(into: &nodes, depth: depth + 1) else { return false }
                        count += 1
                        skipWhitespace()
                        guard index < bytes.count else { return false }
                        if bytes[index] == 0x2C {
                            index += 1
                            continue
                        }
                        guard bytes[index] == 0x5D else { return false }
                        index += 1
                        break
                    }
                }
                nodes[position].count = count
            case 0x74:
                guard literal("true") else { return false }
                nodes.append(Node(kind: .bool, flag: true))
            case 0x66:
                guard literal("false") else { return false }
                nodes.append(Node(kind: .bool, flag: false))
            case 0x6E:
                guard literal("null") else { return false }
                nodes.append(Node(kind: .null))
            default:
                guard let node = number() else { return false }
                nodes.append(node)
            }
            nodes[position].next = Int32(nodes.count)
            return true
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            let matches = word.withUTF8Buffer { expected in
                bytes[index..<index + count].elementsEqual(expected)
            }
            index += count
            return matches
        }

        /// A string at `index` (its opening quote); escapes are checked here, decoded on use.
        private mutating func string() -> Node? {
            index += 1
            let start = index
            var escaped = false
            var nonASCII = false
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 0x22 {
                    let node = Node(
                        kind: .string, escaped: escaped, flag: nonASCII, start: Int32(start), end: Int32(index))
                    index += 1
                    return node
                }
                if byte < 0x20 { return nil }
                if byte >= 0x80 { nonASCII = true }
                if byte == 0x5C {
                    escaped = true
                    guard index + 1 < bytes.count else { return nil }
                    switch bytes[index + 1] {
                    case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74: index += 2
                    case 0x75:
                        guard index + 6 <= bytes.count,
                            bytes[index + 2..<index + 6].allSatisfy({
                                $0 < 0x80 && Character(Unicode.Scalar($0)).isHexDigit
                            })
                        else { return nil }
                        index += 6
                    default: return nil
                    }
                    continue
                }
                index += 1
            }
            return nil
        }

        /// A number: an integer that fits `Int64` is kept; any other valid number is marked
        /// `otherNumber` (decoding one gives up).
        private mutating func number() -> Node? {
            let start = index
            var negative = false
            if bytes[index] == 0x2D {
                negative = true
                index += 1
            }
            guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { return nil }
            var magnitude: UInt64 = 0
            var overflow = false
            if bytes[index] == 0x30 {
                index += 1
            } else {
                while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                    let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
                    let (plus, o2) = times.addingReportingOverflow(UInt64(bytes[index] - 0x30))
                    overflow = overflow || o1 || o2
                    magnitude = plus
                    index += 1
                }
            }
            var plain = true
            if index < bytes.count, bytes[index] == 0x2E {
                plain = false
                index += 1
                guard digits() else { return nil }
            }
            if index < bytes.count, bytes[index] == 0x65 || bytes[index] == 0x45 {
                plain = false
                index += 1
                if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 }
                guard digits() else { return nil }
            }
            guard plain, !overflow else { return Node(kind: .otherNumber, start: Int32(start)) }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return Node(kind: .otherNumber, start: Int32(start)) }
                return Node(kind: .integer, integer: magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude))
            }
            guard magnitude <= UInt64(Int64.max) else { return Node(kind: .otherNumber, start: Int32(start)) }
            return Node(kind: .integer, integer: Int64(magnitude))
        }

        private mutating func digits() -> Bool {
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            return index > start
        }
    }
}

/// The `Decoder` of one value of a `ColumnJSONDocument`.
/// - Note: Not thread-safe; lives for one `ColumnJSONReader.decode`.
struct ColumnJSONDecoder: Decoder {
    let document: ColumnJSONDocument
    let node: Int

    // Foundation fills these; nothing the store decodes reads them.
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(
            ColumnJSONKeyedDecodingContainer<Key>(document: document, members: try document.members(of: node)))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard document.nodes[node].kind == .array else { throw document.fail() }
        return ColumnJSONUnkeyedDecodingContainer(document: document, array: node)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ColumnJSONSingleValueDecodingContainer(document: document, node: node)
    }

    /// A value of a type Foundation decodes with a strategy of its own, or from numbers this
    /// reader does not keep, is left to Foundation.
    static func decodable<T: Decodable>(_ type: T.Type) -> Bool {
        !(T.self == Date.self || T.self == Data.self || T.self == URL.self || T.self == Decimal.self
            || T.self == Double.self || T.self == Float.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, document: ColumnJSONDocument, node: Int) throws -> T {
        if T.self == String.self { return try document.string(node) as! T }
        if T.self == Int64.self { return try document.integer(node, as: Int64.self) as! T }
        if T.self == Int.self { return try document.integer(node, as: Int.self) as! T }
        if T.self == Bool.self { return try document.bool(node) as! T }
        guard decodable(T.self) else { throw document.fail() }
        return try T(from: ColumnJSONDecoder(document: document, node: node))
    }
}

/// An object's members, found by comparing key bytes (objects hold a few dozen members).
struct ColumnJSONKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let document: ColumnJSONDocument
    let members: [(start: Int32, end: Int32, value: Int)]

    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        members.compactMap { member in
            Key(stringValue: String(decoding: document.bytes[Int(member.start)..<Int(member.end)], as: UTF8.self))
        }
    }

    /// The value of `key`; a repeated key is left to Foundation.
    private func find(_ key: Key) -> Int? {
        var name = key.stringValue
        guard name.utf8.allSatisfy({ $0 < 0x80 }) else {
            document.gaveUp = true
            return nil
        }
        let found = name.withUTF8 { wanted in
            document.bytes.withUnsafeBufferPointer { bytes -> (node: Int?, repeated: Bool) in
                var found: Int?
                for member in members where Int(member.end - member.start) == wanted.count {
                    guard
                        wanted.isEmpty
                            || memcmp(bytes.baseAddress! + Int(member.start), wanted.baseAddress!, wanted.count) == 0
                    else { continue }
                    guard found == nil else { return (nil, true) }
                    found = member.value
                }
                return (found, false)
            }
        }
        if found.repeated { document.gaveUp = true }
        return found.node
    }

    private func value(_ key: Key) throws -> Int {
        guard let node = find(key) else { throw document.fail() }
        return node
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        document.nodes[try value(key)].kind == .null
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try document.bool(try value(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try document.string(try value(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { throw document.fail() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw document.fail() }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try document.integer(try value(key), as: Int.self) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try document.integer(try value(key), as: Int8.self)
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try document.integer(try value(key), as: Int16.self)
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try document.integer(try value(key), as: Int32.self)
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try document.integer(try value(key), as: Int64.self)
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try document.integer(try value(key), as: UInt.self)
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try document.integer(try value(key), as: UInt8.self)
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try document.integer(try value(key), as: UInt16.self)
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try document.integer(try value(key), as: UInt32.self)
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try document.integer(try value(key), as: UInt64.self)
    }
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { throw document.fail() }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { throw document.fail() }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try ColumnJSONDecoder.decode(T.self, document: document, node: try value(key))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try ColumnJSONDecoder(document: document, node: try value(key)).container(keyedBy: NestedKey.self)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ColumnJSONDecoder(document: document, node: try value(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { throw document.fail() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw document.fail() }
}

/// An array's elements in order.
struct ColumnJSONUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let document: ColumnJSONDocument
    var count: Int?
    private(set) var currentIndex = 0
    /// The node of the element at `currentIndex`.
    private var node: Int

    init(document: ColumnJSONDocument, array: Int) {
        self.document = document
        count = Int(document.nodes[array].count)
        node = array + 1
    }

    var codingPath: [any CodingKey] { [] }
    var isAtEnd: Bool { currentIndex >= count! }

    /// The current element's node, then moves past it.
    private mutating func next() throws -> Int {
        guard !isAtEnd else { throw document.fail() }
        let current = node
        node = Int(document.nodes[current].next)
        currentIndex += 1
        return current
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { throw document.fail() }
        guard document.nodes[node].kind == .null else { return false }
        _ = try next()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try document.bool(try next()) }
    mutating func decode(_ type: String.Type) throws -> String { try document.string(try next()) }
    mutating func decode(_ type: Double.Type) throws -> Double { throw document.fail() }
    mutating func decode(_ type: Float.Type) throws -> Float { throw document.fail() }
    mutating func decode(_ type: Int.Type) throws -> Int { try document.integer(try next(), as: Int.self) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try document.integer(try next(), as: Int8.self) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try document.integer(try next(), as: Int16.self) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try document.integer(try next(), as: Int32.self) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try document.integer(try next(), as: Int64.self) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try document.integer(try next(), as: UInt.self) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try document.integer(try next(), as: UInt8.self) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try document.integer(try next(), as: UInt16.self) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try document.integer(try next(), as: UInt32.self) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try document.integer(try next(), as: UInt64.self) }
    mutating func decode(_ type: Int128.Type) throws -> Int128 { throw document.fail() }
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { throw document.fail() }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // Checked before moving on: Foundation does not advance past an element it failed on.
        guard !isAtEnd else { throw document.fail() }
        let value = try ColumnJSONDecoder.decode(T.self, document: document, node: node)
        _ = try next()
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try ColumnJSONDecoder(document: document, node: try next()).container(keyedBy: NestedKey.self)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try ColumnJSONDecoder(document: document, node: try next()).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { throw document.fail() }
}

/// One value.
struct ColumnJSONSingleValueDecodingContainer: SingleValueDecodingContainer {
    let document: ColumnJSONDocument
    let node: Int

    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { document.nodes[node].kind == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try document.bool(node) }
    func decode(_ type: String.Type) throws -> String { try document.string(node) }
    func decode(_ type: Double.Type) throws -> Double { throw document.fail() }
    func decode(_ type: Float.Type) throws -> Float { throw document.fail() }
    func decode(_ type: Int.Type) throws -> Int { try document.integer(node, as: Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try document.integer(node, as: Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try document.integer(node, as: Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try document.integer(node, as: Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try document.integer(node, as: Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try document.integer(node, as: UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try document.integer(node, as: UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try document.integer(node, as: UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try document.integer(node, as: UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try document.integer(node, as: UInt64.self) }
    func decode(_ type: Int128.Type) throws -> Int128 { throw document.fail() }
    func decode(_ type: UInt128.Type) throws -> UInt128 { throw document.fail() }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try ColumnJSONDecoder.decode(T.self, document: document, node: node)
    }
}
