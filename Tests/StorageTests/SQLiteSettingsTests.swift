import CSQLite
import Testing

@testable import Storage

/// The settings every SQLite connection runs with.
@Suite struct SQLiteSettingsTests {
    /// SQLite's memory statistics are off for the process (their mutex serialized every
    /// allocation of concurrent readers): the counter they keep stays at zero.
    @Test func memoryStatisticsAreOff() async throws {
        try await withStore(.sqlite) { store, _ in
            _ = try await store.read { reader in try reader.customerIds(appId: "none") }
            #expect(SQLiteConnection.memoryStatisticsSetting == SQLITE_OK)
            #expect(SQLiteConnection.trackedMemory == 0)
        }
    }

    @Test("writes are durable at commit; the writer caches 64 MiB of pages and each reader 16 MiB")
    func connectionSettings() async throws {
        try await withStore(.sqlite) { store, _ in
            let writer = try await store.write { tx in
                try ["synchronous", "journal_mode", "cache_size", "foreign_keys"].map {
                    try (tx as! SQLStoreTransaction).connection.query("PRAGMA \($0)", []).first?.text(0)
                }
            }
            #expect(writer == ["2", "wal", "-65536", "1"])
            let reader = try await store.read { reader in
                try (reader as! SQLStoreTransaction).connection.query("PRAGMA cache_size", []).first?.text(0)
            }
            #expect(reader == "-16384")
        }
    }

    /// PostgreSQL's `$n` placeholders become SQLite's plain `?` when they run 1, 2, … n in
    /// order (SQLite names each `?N` by a search of all of them: preparing thousands cost time
    /// in their square), and stay numbered otherwise; a `$` not before a digit is left alone.
    @Test func placeholdersInOrderBecomePlain() async throws {
        #expect(SQLiteConnection.sqliteText("SELECT $1, $2 WHERE x = $3") == "SELECT ?, ? WHERE x = ?")
        #expect(SQLiteConnection.sqliteText("SELECT $2, $1") == "SELECT ?2, ?1")
        #expect(SQLiteConnection.sqliteText("SELECT $1 WHERE a = $1") == "SELECT ?1 WHERE a = ?1")
        #expect(SQLiteConnection.sqliteText("SELECT $1, $3") == "SELECT ?1, ?3")
        #expect(SQLiteConnection.sqliteText("SELECT '$.a', $1, $10") == "SELECT '$.a', ?1, ?10")
        #expect(SQLiteConnection.sqliteText("SELECT 1") == "SELECT 1")
        let rows = (1...2_000).map { "($\(3 * $0 - 2), $\(3 * $0 - 1), $\(3 * $0))" }.joined(separator: ", ")
        #expect(
            SQLiteConnection.sqliteText("VALUES \(rows)") == "VALUES "
                + Array(repeating: "(?, ?, ?)", count: 2_000).joined(separator: ", "))
        // Both forms bind the values to the numbers written.
        try await withStore(.sqlite) { store, _ in
            let answers = try await store.write { tx in
                let connection = (tx as! SQLStoreTransaction).connection
                return try [
                    connection.query("SELECT $1, $2", [.text("a"), .text("b")]).first.map {
                        [try $0.text(0), try $0.text(1)]
                    },
                    connection.query("SELECT $2, $1", [.text("a"), .text("b")]).first.map {
                        [try $0.text(0), try $0.text(1)]
                    },
                    connection.query("SELECT $1, $1", [.text("a")]).first.map { [try $0.text(0), try $0.text(1)] },
                ]
            }
            #expect(answers == [["a", "b"], ["b", "a"], ["a", "a"]])
        }
    }
}
