import AppStoreModels
import Foundation

/// A bound statement argument or a result column. Values always travel bound, never
/// interpolated into SQL text.
/// - Note: Immutable value; `Sendable`.
enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case text(String)

    init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    init(_ value: Int) { self = .integer(Int64(value)) }
    init(_ value: Bool) { self = .integer(value ? 1 : 0) }
    init(_ value: Timestamp?) { self = value.map { .integer($0.millisecondsSince1970) } ?? .null }

    /// Hands `body` the UTF-8 bytes of a text argument as the engines store it, in place for a
    /// native string (no C string made first: the implicit `String` to `char *` conversion
    /// copies every byte into a new array, and a payload is kilobytes).
    ///
    /// A NUL is refused, on both engines, without quoting the value: PostgreSQL's text cannot
    /// hold one, and an id cut there would make two ids one. JSON text escapes it (`\u0000`),
    /// so a JSON column can be stored with one.
    static func withStorableUTF8<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) throws(StoreError) -> R {
        var text = text
        let outcome = text.withUTF8 { bytes -> Result<R, StoreError> in
            if let base = bytes.baseAddress, memchr(base, 0, bytes.count) != nil {
                return .failure(
                    StoreError(.unstorableValue, "a text value holds a NUL character, which the store cannot keep"))
            }
            return .success(body(bytes))
        }
        return try outcome.get()
    }
}

/// One result row, columns in `SELECT` order.
/// - Note: Immutable value; `Sendable`.
struct SQLRow: Sendable {
    var values: [SQLValue]

    func text(_ index: Int) throws(StoreError) -> String {
        switch values[index] {
        case .text(let value): return value
        case .integer(let value): return String(value)
        case .null: throw StoreError(.corruptValue, "column \(index) is NULL, expected text")
        }
    }

    func optionalText(_ index: Int) throws(StoreError) -> String? {
        if case .null = values[index] { return nil }
        return try text(index)
    }

    func integer(_ index: Int) throws(StoreError) -> Int64 {
        switch values[index] {
        case .integer(let value): return value
        case .text(let value):
            guard let parsed = Int64(value) else {
                throw StoreError(.corruptValue, "column \(index) is not an integer")
            }
            return parsed
        case .null: throw StoreError(.corruptValue, "column \(index) is NULL, expected an integer")
        }
    }

    func optionalInteger(_ index: Int) throws(StoreError) -> Int64? {
        if case .null = values[index] { return nil }
        return try integer(index)
    }

    func timestamp(_ index: Int) throws(StoreError) -> Timestamp {
        Timestamp(millisecondsSince1970: try integer(index))
    }

    func optionalTimestamp(_ index: Int) throws(StoreError) -> Timestamp? {
        try optionalInteger(index).map { Timestamp(millisecondsSince1970: $0) }
    }

    func bool(_ index: Int) throws(StoreError) -> Bool { try integer(index) != 0 }
}
