import Foundation

// The canonical JSON writer behind `AppStoreJSON.encode`: byte for byte what Foundation's
// `JSONEncoder` writes with `.sortedKeys` and `.withoutEscapingSlashes` (keys sorted as UTF-8,
// Foundation's string escapes), written straight into one buffer instead of through
// Foundation's intermediate tree (a stored CustomerInfo took ~130 µs through Foundation).
//
// Covers keyed, unkeyed and single-value containers with strings, booleans, integers, nil and
// `Timestamp`. Anything else (floating point, `Date`, `Data`, `URL`, `Decimal`, nested
// containers, super encoders, an `encode(to:)` that encodes nothing or opens two containers)
// marks the document unsupported and `AppStoreJSON.encode` asks Foundation, so the output never
// differs from Foundation's. A value Foundation formats stops the writing at once; a nested or
// second container is noticed when opened and the rest is written for nothing (no stored model
// has one). Foundation on Linux sorts keys by their UTF-8 bytes, as here; Darwin's sorts them
// otherwise, so `AppStoreJSON.encode` uses this writer on Linux only.

/// The buffer and the writing rules shared by the encoders of one document.
///
/// The bytes sit behind a pointer held in a `let`: appends then cost no dynamic exclusivity
/// checks, which on a class's `var` array were a sixth of the encoding time.
/// - Note: Not thread-safe; lives for one document.
package final class CanonicalJSONWriter {
    // The byte-level members are inlinable: Storage's `ColumnJSON.transaction` writes a bulk
    // import's facts through them, and a call per byte across the module boundary cost it ~15%.
    @usableFromInline
    struct Buffer {
        @usableFromInline var base: UnsafeMutablePointer<UInt8>
        @usableFromInline var count: Int
        @usableFromInline var capacity: Int

        @usableFromInline
        init(base: UnsafeMutablePointer<UInt8>, count: Int, capacity: Int) {
            self.base = base
            self.count = count
            self.capacity = capacity
        }
    }

    @usableFromInline let buffer: UnsafeMutablePointer<Buffer>
    /// Set when the value needs something this writer leaves to Foundation.
    var unsupported = false
    /// Member lists of finished objects, emptied, for the next objects to fill, and the work
    /// arrays `finishObject` sorts and copies with: a CustomerInfo holds dozens of objects, and
    /// allocating these afresh for each was a third of its encoding's time.
    /// (Unchecked: a class's `var` otherwise costs a dynamic exclusivity check at each access,
    /// and the writer is confined to one document on one thread.)
    @exclusivity(unchecked) private var spareMembers: [[CanonicalJSONObject.Member]] = []
    @exclusivity(unchecked) private var order: [Int] = []
    @exclusivity(unchecked) private var keep: [Bool] = []
    @exclusivity(unchecked) private var body: [UInt8] = []

    package init(capacity: Int = 1_024) {
        buffer = .allocate(capacity: 1)
        buffer.initialize(to: Buffer(base: .allocate(capacity: capacity), count: 0, capacity: capacity))
    }

    deinit {
        buffer.pointee.base.deallocate()
        buffer.deinitialize(count: 1)
        buffer.deallocate()
    }

    @inlinable package var count: Int { buffer.pointee.count }

    package func encodeDocument<T: Encodable>(_ value: T) -> String? {
        encodeSupported(value) ? text : nil
    }

    /// Writes `value` as one document; false when some part of it is left to Foundation (or
    /// its `encode(to:)` threw), and then what was written means nothing.
    func encodeSupported<T: Encodable>(_ value: T) -> Bool {
        do {
            try encodeValue(value)
        } catch {
            return false
        }
        return !unsupported
    }

    /// An empty member list for a new object: a finished object's, when there is one.
    func spareMemberList() -> [CanonicalJSONObject.Member] {
        spareMembers.popLast() ?? []
    }

    /// What has been written, as bytes.
    var data: Data { Data(bytes: buffer.pointee.base, count: count) }

    /// What has been written, as text.
    package var text: String {
        String(decoding: UnsafeBufferPointer(start: buffer.pointee.base, count: count), as: UTF8.self)
    }

    /// Marks the document as Foundation's and answers the error that stops writing it: what
    /// follows would be written for nothing (an `encode(to:)` that catches it and goes on
    /// leaves the mark).
    func giveUp() -> any Error {
        unsupported = true
        return Unsupported()
    }

    private struct Unsupported: Error {}

    /// Writes any value at the current position (its nested containers complete).
    func encodeValue<T: Encodable>(_ value: T) throws {
        // Exact types only (an optional goes through its own `encode(to:)` and comes back here).
        if T.self == String.self {
            writeString(value as! String)
        } else if T.self == Timestamp.self {
            // What `Timestamp.encode(to:)` writes: its milliseconds in a single value.
            writeInteger((value as! Timestamp).millisecondsSince1970)
        } else if T.self == Bool.self {
            writeBool(value as! Bool)
        } else if T.self == Int.self {
            writeInteger(value as! Int)
        } else if T.self == Int64.self {
            writeInteger(value as! Int64)
        } else if T.self == Double.self || T.self == Float.self || T.self == Date.self || T.self == Data.self
            || T.self == URL.self || T.self == Decimal.self
        {
            // Foundation formats or converts these itself.
            throw giveUp()
        } else {
            let encoder = CanonicalJSONEncoder(writer: self)
            try value.encode(to: encoder)
            encoder.finish()
        }
    }

    // MARK: - Bytes

    @inlinable @inline(__always)
    func reserve(_ extra: Int) {
        let needed = buffer.pointee.count + extra
        guard needed > buffer.pointee.capacity else { return }
        let capacity = max(needed, buffer.pointee.capacity * 2)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        grown.update(from: buffer.pointee.base, count: buffer.pointee.count)
        buffer.pointee.base.deallocate()
        buffer.pointee.base = grown
        buffer.pointee.capacity = capacity
    }

    @inlinable @inline(__always)
    package func append(_ byte: UInt8) {
        reserve(1)
        buffer.pointee.base[buffer.pointee.count] = byte
        buffer.pointee.count += 1
    }

    @inlinable
    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (buffer.pointee.base + buffer.pointee.count).update(from: source, count: bytes.count)
        buffer.pointee.count += bytes.count
    }

    @inlinable
    package func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    // MARK: - Values

    func writeNull() { append("null") }

    @inlinable
    package func writeBool(_ value: Bool) { value ? append("true") : append("false") }

    @inlinable
    package func writeInteger<I: BinaryInteger>(_ value: I) {
        if let small = Int64(exactly: value) {
            writeDecimal(small)
        } else {
            var text = String(value)
            text.withUTF8 { append($0) }
        }
    }

    /// Decimal digits, as `String(value)` writes them.
    @inlinable
    func writeDecimal(_ value: Int64) {
        if value < 0 { append(0x2D) }
        var magnitude = value.magnitude
        var digits = 1
        var probe = magnitude
        while probe >= 10 {
            probe /= 10
            digits += 1
        }
        reserve(digits)
        let end = buffer.pointee.base + buffer.pointee.count + digits
        for offset in 1...digits {
            end[-offset] = UInt8(truncatingIfNeeded: magnitude % 10) + 0x30
            magnitude /= 10
        }
        buffer.pointee.count += digits
    }

    /// Foundation's escapes: `"` and `\`, the short forms of backspace, form feed, newline,
    /// return and tab, `\u00xx` (lowercase hex) for other control characters; `/` and
    /// everything from U+0020 up are written as they are. Returns whether anything was escaped.
    @discardableResult
    @inlinable
    package func writeString(_ value: String) -> Bool {
        append(0x22)
        var escaped = false
        var text = value
        text.withUTF8 { utf8 in
            var mark = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                escaped = true
                append(UnsafeBufferPointer(rebasing: utf8[mark..<index]))
                mark = index + 1
                switch byte {
                case 0x22: append("\\\"")
                case 0x5C: append("\\\\")
                case 0x08: append("\\b")
                case 0x0C: append("\\f")
                case 0x0A: append("\\n")
                case 0x0D: append("\\r")
                case 0x09: append("\\t")
                default:
                    let hex: StaticString = "0123456789abcdef"
                    append("\\u00")
                    append(hex.utf8Start[Int(byte >> 4)])
                    append(hex.utf8Start[Int(byte & 0xF)])
                }
            }
            append(UnsafeBufferPointer(rebasing: utf8[mark..<utf8.count]))
        }
        append(0x22)
        return escaped
    }

    // MARK: - Objects

    /// An object's members as written (`"key":value` back to back, from `start`, which holds
    /// the `{`), rewritten in key order with commas; a key written twice keeps its last value.
    func finishObject(_ object: CanonicalJSONObject) {
        // Taken out of the object, so that this is the list's only reference when it is
        // emptied for the next object (emptied while shared, it would be copied).
        var members = object.members
        object.members = []
        defer {
            members.removeAll(keepingCapacity: true)
            spareMembers.append(members)
        }
        let base = buffer.pointee.base
        // Keys compare as the UTF-8 of the raw key: the bytes just written, unless some key
        // needed escapes (escaped bytes do not order like the raw ones).
        let raw = !members.contains { $0.escaped }
        func compare(_ a: Int, _ b: Int) -> Int32 {
            let (left, right) = (members[a], members[b])
            if raw {
                let (leftLength, rightLength) = (left.keyEnd - left.start - 1, right.keyEnd - right.start - 1)
                let order = memcmp(base + left.start + 1, base + right.start + 1, min(leftLength, rightLength))
                if order != 0 { return order }
                return leftLength < rightLength ? -1 : (leftLength > rightLength ? 1 : 0)
            }
            if left.key == right.key { return 0 }
            return left.key.utf8.lexicographicallyPrecedes(right.key.utf8) ? -1 : 1
        }
        order.removeAll(keepingCapacity: true)
        order.append(contentsOf: members.indices)
        var sorted = true
        for index in members.indices.dropFirst() where compare(index - 1, index) >= 0 {
            sorted = false
            break
        }
        if sorted {
            // Already in order and no key twice: only the commas are missing.
            guard members.count > 1 else {
                append(0x7D)
                return
            }
        } else {
            order.sort { a, b in
                let result = compare(a, b)
                return result < 0 || (result == 0 && a < b)
            }
        }
        // Of equal keys (now adjacent, in writing order) the last wins.
        keep.removeAll(keepingCapacity: true)
        keep.append(contentsOf: repeatElement(true, count: order.count))
        for position in order.indices.dropLast() where compare(order[position], order[position + 1]) == 0 {
            keep[position] = false
        }
        // The rewrite overwrites the keys `compare` reads: nothing compares from here on.
        let bodyStart = object.start + 1
        body.removeAll(keepingCapacity: true)
        body.append(contentsOf: UnsafeBufferPointer(start: base + bodyStart, count: count - bodyStart))
        buffer.pointee.count = bodyStart
        var first = true
        let (order, keep, body) = (self.order, self.keep, self.body)
        body.withUnsafeBufferPointer { body in
            for (position, index) in order.enumerated() where keep[position] {
                if !first { append(0x2C) }
                first = false
                let member = members[index]
                append(UnsafeBufferPointer(rebasing: body[(member.start - bodyStart)..<(member.end - bodyStart)]))
            }
        }
        append(0x7D)
    }
}

/// An object being written: where its `{` is, and each member's key (and where its quoted
/// key ends) and byte range.
/// - Note: Not thread-safe; lives for one document.
final class CanonicalJSONObject {
    typealias Member = (key: String, start: Int, keyEnd: Int, end: Int, escaped: Bool)
    let start: Int
    var members: [Member]

    init(start: Int, members: [Member] = []) {
        self.start = start
        self.members = members
    }
}

/// An array being written: how many elements it has so far (for the commas).
/// - Note: Not thread-safe; lives for one document.
final class CanonicalJSONArray {
    var count = 0
}

/// The `Encoder` one value is encoded with; the container it hands out writes at the
/// current end of the buffer, and `finish` closes it.
/// - Note: Not thread-safe; lives for one document.
final class CanonicalJSONEncoder: Encoder {
    enum State {
        case empty
        case single(start: Int)
        case object(CanonicalJSONObject)
        case array(CanonicalJSONArray)
    }

    let writer: CanonicalJSONWriter
    var state = State.empty
    // Foundation fills these; nothing the store encodes reads them.
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(writer: CanonicalJSONWriter) { self.writer = writer }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        switch state {
        case .empty:
            let object = CanonicalJSONObject(start: writer.count, members: writer.spareMemberList())
            writer.append(0x7B)
            state = .object(object)
            return KeyedEncodingContainer(CanonicalJSONKeyedContainer(writer: writer, object: object))
        case .object(let object):
            return KeyedEncodingContainer(CanonicalJSONKeyedContainer(writer: writer, object: object))
        default:
            return KeyedEncodingContainer(
                CanonicalJSONKeyedContainer(writer: detached(), object: CanonicalJSONObject(start: 0)))
        }
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        switch state {
        case .empty:
            let array = CanonicalJSONArray()
            writer.append(0x5B)
            state = .array(array)
            return CanonicalJSONUnkeyedContainer(writer: writer, array: array)
        case .array(let array):
            return CanonicalJSONUnkeyedContainer(writer: writer, array: array)
        default:
            return CanonicalJSONUnkeyedContainer(writer: detached(), array: CanonicalJSONArray())
        }
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        guard case .empty = state else { return CanonicalJSONSingleValueContainer(writer: detached()) }
        state = .single(start: writer.count)
        return CanonicalJSONSingleValueContainer(writer: writer)
    }

    func finish() {
        switch state {
        case .empty: writer.unsupported = true
        // A single value container nothing was encoded into: Foundation writes `{}` nested
        // and throws at the top.
        case .single(let start): if writer.count == start { writer.unsupported = true }
        case .object(let object): writer.finishObject(object)
        case .array: writer.append(0x5D)
        }
    }

    /// A second container on one encoder: Foundation decides what that means.
    private func detached() -> CanonicalJSONWriter {
        writer.unsupported = true
        return CanonicalJSONWriter()
    }
}

/// - Note: Not thread-safe; lives for one document.
struct CanonicalJSONKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: CanonicalJSONWriter
    let object: CanonicalJSONObject
    var codingPath: [any CodingKey] { [] }

    private func member(_ key: Key, _ write: () throws -> Void) rethrows {
        let start = writer.count
        let name = key.stringValue
        let escaped = writer.writeString(name)
        let keyEnd = writer.count - 1
        writer.append(0x3A)
        try write()
        object.members.append((name, start, keyEnd, writer.count, escaped))
    }

    mutating func encodeNil(forKey key: Key) throws { member(key) { writer.writeNull() } }
    mutating func encode(_ value: Bool, forKey key: Key) throws { member(key) { writer.writeBool(value) } }
    mutating func encode(_ value: String, forKey key: Key) throws { member(key) { writer.writeString(value) } }
    mutating func encode(_ value: Int, forKey key: Key) throws { member(key) { writer.writeInteger(value) } }
    mutating func encode(_ value: Int8, forKey key: Key) throws { member(key) { writer.writeInteger(value) } }
    mutating func encode(_ value: Int16, forKey key: Key) throws { member(key) { writer.writeInteger(value) } }
    mutating func encode(_ value: Int32, forKey key: Key) throws { member(key) { writer.writeInteger(value) } }
    mutating func encode(_ value: Int64, forKey key: Key) throws { member(key) { writer.writeInteger(value) } }
    mutating func encode(_ value: UInt, forKey key: Key) throws { member(key) { writer.writeInteger(value) } }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { member(key) { writer.writeInteger(value) } }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { member(key) { writer.writeInteger(value) } }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { member(key) { writer.writeInteger(value) } }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { member(key) { writer.writeInteger(value) } }
    mutating func encode(_ value: Double, forKey key: Key) throws { throw writer.giveUp() }
    mutating func encode(_ value: Float, forKey key: Key) throws { throw writer.giveUp() }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try member(key) { try writer.encodeValue(value) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        writer.unsupported = true
        return CanonicalJSONEncoder(writer: CanonicalJSONWriter()).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        writer.unsupported = true
        return CanonicalJSONEncoder(writer: CanonicalJSONWriter()).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        writer.unsupported = true
        return CanonicalJSONEncoder(writer: CanonicalJSONWriter())
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder() }
}

/// - Note: Not thread-safe; lives for one document.
struct CanonicalJSONUnkeyedContainer: UnkeyedEncodingContainer {
    let writer: CanonicalJSONWriter
    let array: CanonicalJSONArray
    var codingPath: [any CodingKey] { [] }
    var count: Int { array.count }

    private func element(_ write: () throws -> Void) rethrows {
        if array.count > 0 { writer.append(0x2C) }
        try write()
        array.count += 1
    }

    mutating func encodeNil() throws { element { writer.writeNull() } }
    mutating func encode(_ value: Bool) throws { element { writer.writeBool(value) } }
    mutating func encode(_ value: String) throws { element { writer.writeString(value) } }
    mutating func encode(_ value: Int) throws { element { writer.writeInteger(value) } }
    mutating func encode(_ value: Int8) throws { element { writer.writeInteger(value) } }
    mutating func encode(_ value: Int16) throws { element { writer.writeInteger(value) } }
    mutating func encode(_ value: Int32) throws { element { writer.writeInteger(value) } }
    mutating func encode(_ value: Int64) throws { element { writer.writeInteger(value) } }
    mutating func encode(_ value: UInt) throws { element { writer.writeInteger(value) } }
    mutating func encode(_ value: UInt8) throws { element { writer.writeInteger(value) } }
    mutating func encode(_ value: UInt16) throws { element { writer.writeInteger(value) } }
    mutating func encode(_ value: UInt32) throws { element { writer.writeInteger(value) } }
    mutating func encode(_ value: UInt64) throws { element { writer.writeInteger(value) } }
    mutating func encode(_ value: Double) throws { throw writer.giveUp() }
    mutating func encode(_ value: Float) throws { throw writer.giveUp() }
    mutating func encode<T: Encodable>(_ value: T) throws { try element { try writer.encodeValue(value) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        writer.unsupported = true
        return CanonicalJSONEncoder(writer: CanonicalJSONWriter()).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        writer.unsupported = true
        return CanonicalJSONEncoder(writer: CanonicalJSONWriter()).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        writer.unsupported = true
        return CanonicalJSONEncoder(writer: CanonicalJSONWriter())
    }
}

/// - Note: Not thread-safe; lives for one document.
struct CanonicalJSONSingleValueContainer: SingleValueEncodingContainer {
    let writer: CanonicalJSONWriter
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { writer.writeNull() }
    mutating func encode(_ value: Bool) throws { writer.writeBool(value) }
    mutating func encode(_ value: String) throws { writer.writeString(value) }
    mutating func encode(_ value: Int) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Int8) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Int16) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Int32) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Int64) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt8) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt16) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt32) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt64) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Double) throws { throw writer.giveUp() }
    mutating func encode(_ value: Float) throws { throw writer.giveUp() }
    mutating func encode<T: Encodable>(_ value: T) throws { try writer.encodeValue(value) }
}
