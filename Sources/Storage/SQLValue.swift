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

    /// Both engines take a text argument as a C string, so a NUL would silently end the value
    /// there (two ids differing after it would be one row), and PostgreSQL's text cannot hold
    /// one at all: such a value is refused, on both, without quoting it. JSON text escapes it
    /// (`\u0000`), so a JSON column can be stored with one.
    static func refuseNUL(in text: String) throws(StoreError) {
        var text = text
        let holdsNUL = text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, 0, bytes.count) != nil
        }
        if holdsNUL {
            throw StoreError(.unstorableValue, "a text value holds a NUL character, which the store cannot keep")
        }
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
