import Foundation
import Testing

@testable import Storage

/// Text arguments reach both engines byte for byte from the string's own UTF-8 (no C string
/// made first): an empty text stays an empty text, never NULL; a NUL is refused.
@Suite struct TextArgumentTests {
    static let texts = [
        "", "a", "é𝄞 ünïcode", "fifteen bytes!!", String(repeating: "x", count: 100_000) + "end",
        String("prefix and the rest".dropFirst(7)),
    ]

    /// Each text bound, read back, its NULL-ness and its length in bytes, as the engine sees them.
    static func roundTrips(_ connection: any SQLConnection, sql: String) throws {
        for text in Self.texts {
            let row = try #require(try connection.query(sql, [.text(text)]).first)
            #expect(try row.text(0) == text)
            #expect(try row.integer(1) == 0, "\(text.prefix(20)) arrived as NULL")
            #expect(try row.integer(2) == Int64(text.utf8.count))
        }
        #expect(throws: StoreError(.unstorableValue, "a text value holds a NUL character, which the store cannot keep"))
        {
            _ = try connection.query(sql, [.text("a\u{0}b")])
        }
    }

    @Test func sqlite() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sk_text_\(UUID().uuidString).db").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let connection = try SQLiteConnection(path: path, readOnly: false, busyTimeoutMilliseconds: 1_000)
        defer { connection.close() }
        try Self.roundTrips(connection, sql: "SELECT $1, $1 IS NULL, length(CAST($1 AS BLOB))")
    }

    @Test(.enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage))
    func postgres() throws {
        let connection = try #require(try PostgresPreparedStatementTests.connection(preparing: true))
        defer { connection.close() }
        try Self.roundTrips(connection, sql: "SELECT $1::text, ($1::text IS NULL)::int, octet_length($1::text)")
    }
}
