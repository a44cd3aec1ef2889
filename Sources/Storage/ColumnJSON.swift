import AppStoreModels
import Foundation

/// The JSON of the store's `…_json` columns: byte for byte what `AppStoreJSON.encode` writes
/// (sorted keys compared as UTF-8, unescaped slashes, Foundation's string escapes), written
/// straight into one buffer instead of through Foundation's intermediate tree, which made
/// encoding the dominant cost of a bulk import (about 30 µs per transaction fact).
///
/// Covers what the stored models use: keyed, unkeyed and single-value containers with strings,
/// booleans, integers and nil. Anything else (floating point, `Date`, `Data`, `URL`, `Decimal`,
/// nested containers, super encoders, an `encode(to:)` that encodes nothing) is left to
/// `AppStoreJSON.encode`, so the output never differs from Foundation's.
/// - Note: Stateless; each call uses its own buffer.
enum ColumnJSON {
    static func encode<T: Encodable>(_ value: T) -> String {
        let writer = ColumnJSONWriter()
        if let text = writer.encodeDocument(value) { return text }
        return String(decoding: AppStoreJSON.encode(value), as: UTF8.self)
    }
}

/// The buffer and the writing rules shared by the encoders of one document.
/// - Note: Not thread-safe; lives for one `ColumnJSON.encode`.
final class ColumnJSONWriter {
    var bytes: [UInt8] = []
    /// Set when the value needs something this writer leaves to Foundation.
    var unsupported = false

    func encodeDocument<T: Encodable>(_ value: T) -> String? {
        bytes.reserveCapacity(1_024)
        do {
            try encodeValue(value)
        } catch {
            return nil
        }
        return unsupported ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// Writes any value at the current position (its nested containers complete).
    func encodeValue<T: Encodable>(_ value: T) throws {
        // Exact types only (an optional goes through its own `encode(to:)` and comes back here).
        if T.self == String.self {
            writeString(value as! String)
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
            unsupported = true
        } else {
            let encoder = ColumnJSONEncoder(writer: self)
            try value.encode(to: encoder)
            encoder.finish()
        }
    }

    func writeNull() { bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C]) }

    func writeBool(_ value: Bool) {
        value
            ? bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65])
            : bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])
    }

    func writeInteger<I: BinaryInteger>(_ value: I) {
        var text = String(value)
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Foundation's escapes: `"` and `\`, the short forms of backspace, form feed, newline,
    /// return and tab, `\u00xx` (lowercase hex) for other control characters; `/` and
    /// everything from U+0020 up are written as they are.
    func writeString(_ value: String) {
        bytes.append(0x22)
        var text = value
        text.withUTF8 { utf8 in
            var mark = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<index]))
                mark = index + 1
                switch byte {
                case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
                case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x08: bytes.append(contentsOf: [0x5C, 0x62])
                case 0x0C: bytes.append(contentsOf: [0x5C, 0x66])
                case 0x0A: bytes.append(contentsOf: [0x5C, 0x6E])
                case 0x0D: bytes.append(contentsOf: [0x5C, 0x72])
                case 0x09: bytes.append(contentsOf: [0x5C, 0x74])
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<utf8.count]))
        }
        bytes.append(0x22)
    }

    /// An object's members as written (`"key":value` back to back, from `start`, which holds
    /// the `{`), rewritten in key order with commas; a key written twice keeps its last value.
    func finishObject(_ object: ColumnJSONObject) {
        let members = object.members
        let body = Array(bytes[(object.start + 1)...])
        bytes.removeSubrange((object.start + 1)...)
        let order = members.indices.sorted { a, b in
            let (left, right) = (members[a].key, members[b].key)
            if left == right { return a < b }
            return left.utf8.lexicographicallyPrecedes(right.utf8)
        }
        var first = true
        for (position, index) in order.enumerated() {
            if position + 1 < order.count, members[order[position + 1]].key == members[index].key { continue }
            if !first { bytes.append(0x2C) }
            first = false
            let member = members[index]
            bytes.append(contentsOf: body[(member.start - object.start - 1)..<(member.end - object.start - 1)])
        }
        bytes.append(0x7D)
    }
}

/// An object being written: where its `{` is, and each member's key and byte range.
/// - Note: Not thread-safe; lives for one `ColumnJSON.encode`.
final class ColumnJSONObject {
    let start: Int
    var members: [(key: String, start: Int, end: Int)] = []

    init(start: Int) { self.start = start }
}

/// An array being written: how many elements it has so far (for the commas).
/// - Note: Not thread-safe; lives for one `ColumnJSON.encode`.
final class ColumnJSONArray {
    var count = 0
}

/// The `Encoder` one value is encoded with; the container it hands out writes at the
/// current end of the buffer, and `finish` closes it.
/// - Note: Not thread-safe; lives for one `ColumnJSON.encode`.
final class ColumnJSONEncoder: Encoder {
    enum State {
        case empty
        case single
        case object(ColumnJSONObject)
        case array(ColumnJSONArray)
    }

    let writer: ColumnJSONWriter
    var state = State.empty
    // Foundation fills these; nothing the store encodes reads them.
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(writer: ColumnJSONWriter) { self.writer = writer }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        switch state {
        case .empty:
            let object = ColumnJSONObject(start: writer.bytes.count)
            writer.bytes.append(0x7B)
            state = .object(object)
            return KeyedEncodingContainer(ColumnJSONKeyedContainer(writer: writer, object: object))
        case .object(let object):
            return KeyedEncodingContainer(ColumnJSONKeyedContainer(writer: writer, object: object))
        default:
            return KeyedEncodingContainer(
                ColumnJSONKeyedContainer(writer: detached(), object: ColumnJSONObject(start: 0)))
        }
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        switch state {
        case .empty:
            let array = ColumnJSONArray()
            writer.bytes.append(0x5B)
            state = .array(array)
            return ColumnJSONUnkeyedContainer(writer: writer, array: array)
        case .array(let array):
            return ColumnJSONUnkeyedContainer(writer: writer, array: array)
        default:
            return ColumnJSONUnkeyedContainer(writer: detached(), array: ColumnJSONArray())
        }
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        guard case .empty = state else { return ColumnJSONSingleValueContainer(writer: detached()) }
        state = .single
        return ColumnJSONSingleValueContainer(writer: writer)
    }

    func finish() {
        switch state {
        case .empty: writer.unsupported = true
        case .single: break
        case .object(let object): writer.finishObject(object)
        case .array: writer.bytes.append(0x5D)
        }
    }

    /// A second container on one encoder: Foundation decides what that means.
    private func detached() -> ColumnJSONWriter {
        writer.unsupported = true
        return ColumnJSONWriter()
    }
}

/// - Note: Not thread-safe; lives for one `ColumnJSON.encode`.
struct ColumnJSONKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: ColumnJSONWriter
    let object: ColumnJSONObject
    var codingPath: [any CodingKey] { [] }

    private func member(_ key: Key, _ write: () throws -> Void) rethrows {
        let start = writer.bytes.count
        let name = key.stringValue
        writer.writeString(name)
        writer.bytes.append(0x3A)
        try write()
        object.members.append((name, start, writer.bytes.count))
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
    mutating func encode(_ value: Double, forKey key: Key) throws { writer.unsupported = true }
    mutating func encode(_ value: Float, forKey key: Key) throws { writer.unsupported = true }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try member(key) { try writer.encodeValue(value) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        writer.unsupported = true
        return ColumnJSONEncoder(writer: ColumnJSONWriter()).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        writer.unsupported = true
        return ColumnJSONEncoder(writer: ColumnJSONWriter()).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        writer.unsupported = true
        return ColumnJSONEncoder(writer: ColumnJSONWriter())
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder() }
}

/// - Note: Not thread-safe; lives for one `ColumnJSON.encode`.
struct ColumnJSONUnkeyedContainer: UnkeyedEncodingContainer {
    let writer: ColumnJSONWriter
    let array: ColumnJSONArray
    var codingPath: [any CodingKey] { [] }
    var count: Int { array.count }

    private func element(_ write: () throws -> Void) rethrows {
        if array.count > 0 { writer.bytes.append(0x2C) }
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
    mutating func encode(_ value: Double) throws { writer.unsupported = true }
    mutating func encode(_ value: Float) throws { writer.unsupported = true }
    mutating func encode<T: Encodable>(_ value: T) throws { try element { try writer.encodeValue(value) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        writer.unsupported = true
        return ColumnJSONEncoder(writer: ColumnJSONWriter()).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        writer.unsupported = true
        return ColumnJSONEncoder(writer: ColumnJSONWriter()).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        writer.unsupported = true
        return ColumnJSONEncoder(writer: ColumnJSONWriter())
    }
}

/// - Note: Not thread-safe; lives for one `ColumnJSON.encode`.
struct ColumnJSONSingleValueContainer: SingleValueEncodingContainer {
    let writer: ColumnJSONWriter
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
    mutating func encode(_ value: Double) throws { writer.unsupported = true }
    mutating func encode(_ value: Float) throws { writer.unsupported = true }
    mutating func encode<T: Encodable>(_ value: T) throws { try writer.encodeValue(value) }
}
