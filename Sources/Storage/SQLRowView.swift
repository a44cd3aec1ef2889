import CLibPQ
import CSQLite

/// One result row seen in place, as `SQLConnection.scan` hands it over: integers read from
/// the engine's own row, texts as views of the engine's bytes. Nothing is copied until a
/// caller asks for a `String`, so a statement returning many long texts that the caller only
/// compares (a customer's facts against those already decoded) allocates nothing for them.
///
/// Valid only during the `scan` call that made it: the engine reuses the memory at its next row.
/// - Note: A borrowed view; never stored, never sent to another thread.
struct SQLRowView {
    enum Source {
        /// A stepped SQLite statement.
        case sqlite(OpaquePointer)
        /// A libpq result and the row's index in it.
        case postgres(OpaquePointer, Int32)
    }

    let source: Source

    func isNull(_ column: Int32) -> Bool {
        switch source {
        case .sqlite(let statement): sqlite3_column_type(statement, column) == SQLITE_NULL
        case .postgres(let result, let row): PQgetisnull(result, row, column) == 1
        }
    }

    func integer(_ column: Int32) throws(StoreError) -> Int64 {
        switch source {
        case .sqlite(let statement):
            guard sqlite3_column_type(statement, column) == SQLITE_INTEGER else {
                throw StoreError(.corruptValue, "column \(column) is not an integer")
            }
            return sqlite3_column_int64(statement, column)
        case .postgres:
            guard let value = Int64(try text(column)) else {
                throw StoreError(.corruptValue, "column \(column) is not an integer")
            }
            return value
        }
    }

    /// The column's text as the engine holds it (UTF-8, no terminator), for the duration of `body`.
    func withBytes<R>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws(StoreError) -> R) throws(StoreError)
        -> R
    {
        guard !isNull(column) else { throw StoreError(.corruptValue, "column \(column) is NULL, expected text") }
        return try body(bytes(column))
    }

    /// The column's bytes as text (empty for NULL), valid until the next row.
    private func bytes(_ column: Int32) -> UnsafeRawBufferPointer {
        switch source {
        case .sqlite(let statement):
            // `sqlite3_column_text` before `sqlite3_column_bytes`, as SQLite asks: the count is
            // then that of the UTF-8 text.
            let start = sqlite3_column_text(statement, column)
            let count = Int(sqlite3_column_bytes(statement, column))
            return UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
        case .postgres(let result, let row):
            let start = PQgetvalue(result, row, column)
            let count = Int(PQgetlength(result, row, column))
            return UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
        }
    }

    /// The whole row copied out, as `SQLConnection.query` returns it: NULL, integers (SQLite's
    /// integer values; PostgreSQL's int2, int4 and int8 columns), and the rest as text.
    func copied() -> SQLRow {
        let columns: Int32
        switch source {
        case .sqlite(let statement): columns = sqlite3_column_count(statement)
        case .postgres(let result, _): columns = PQnfields(result)
        }
        var values: [SQLValue] = []
        values.reserveCapacity(Int(columns))
        for column in 0..<columns {
            guard !isNull(column) else {
                values.append(.null)
                continue
            }
            switch source {
            case .sqlite(let statement) where sqlite3_column_type(statement, column) == SQLITE_INTEGER:
                values.append(.integer(sqlite3_column_int64(statement, column)))
            case .postgres(let result, _) where Self.isInteger(PQftype(result, column)):
                let text = String(decoding: bytes(column), as: UTF8.self)
                values.append(Int64(text).map(SQLValue.integer) ?? .text(text))
            default:
                values.append(.text(String(decoding: bytes(column), as: UTF8.self)))
            }
        }
        return SQLRow(values: values)
    }

    /// PostgreSQL's int8, int2 and int4 type ids.
    private static func isInteger(_ type: Oid) -> Bool { type == 20 || type == 21 || type == 23 }

    func text(_ column: Int32) throws(StoreError) -> String {
        try withBytes(column) { bytes in String(decoding: bytes, as: UTF8.self) }
    }

    func optionalText(_ column: Int32) throws(StoreError) -> String? {
        isNull(column) ? nil : try text(column)
    }

    /// Whether the column holds exactly `value`'s UTF-8 text (`nil`: NULL), compared in place.
    func holds(_ column: Int32, text value: String?) -> Bool {
        guard let value else { return isNull(column) }
        guard !isNull(column) else { return false }
        return StoredText.sameBytes(value, bytes(column))
    }

    /// Whether the column holds `value` (`nil`: NULL); a non-integer value throws, as `integer` does.
    func holds(_ column: Int32, integer value: Int64?) throws(StoreError) -> Bool {
        guard let value else { return isNull(column) }
        guard !isNull(column) else { return false }
        return try integer(column) == value
    }
}
