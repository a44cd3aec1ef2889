import CSQLite
import Foundation
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

    /// A savepoint's statement journal (each existing page it changes, as it was) stays in
    /// memory up to just under 128 KiB; SQLite's default spilled it to a temporary file past
    /// 64 KiB, which nearly every notification's ingestion (~25 pages) passed. Changing 25 pages
    /// opens no file; changing 40 spills, which must still work: SQLite's unix VFS writes at most
    /// 128 KiB - 1 bytes at once, and a larger bound made the spill fail with "database or disk
    /// is full" (SQLite 3.40). Either way, rolling the savepoint back restores every row.
    @Test(.enabled(if: Self.countsOpenFiles, "needs /proc/self/fd (Linux)"))
    func statementJournalStaysInMemoryUpToItsBound() async throws {
        #expect(SQLiteConnection.statementJournalSetting == SQLITE_OK)
        try await withStore(.sqlite) { store, _ in
            // Rows of ~4 KB: each on a page of its own, so changing n rows journals n pages.
            @Sendable func body(_ round: Int, _ id: Int) -> String {
                "\(round)-\(id)-" + String(repeating: "x", count: 3_900)
            }
            try await store.write { tx in
                let connection = (tx as! SQLStoreTransaction).connection
                try connection.executeScript("CREATE TABLE journal_probe (id INTEGER PRIMARY KEY, body TEXT)")
                for id in 1...60 {
                    _ = try connection.execute(
                        "INSERT INTO journal_probe (id, body) VALUES ($1, $2)",
                        [.integer(Int64(id)), .text(body(0, id))])
                }
            }
            struct Undo: Error {}
            func temporaryFilesWhileChanging(rows: Int, round: Int) async throws -> Int {
                try await store.write { tx in
                    let connection = (tx as! SQLStoreTransaction).connection
                    var files = -1
                    let before = Self.openTemporaryFiles()
                    do {
                        try tx.withSavepoint {
                            for id in 1...rows {
                                _ = try connection.execute(
                                    "UPDATE journal_probe SET body = $2 WHERE id = $1",
                                    [.integer(Int64(id)), .text(body(round, id))])
                            }
                            files = Self.openTemporaryFiles() - before
                            throw Undo()
                        }
                    } catch is Undo {}
                    return files
                }
            }
            #expect(try await temporaryFilesWhileChanging(rows: 25, round: 1) == 0)
            #expect(try await temporaryFilesWhileChanging(rows: 40, round: 2) == 1)
            let stored = try await store.read { reader in
                try (reader as! SQLStoreTransaction).connection.query(
                    "SELECT body FROM journal_probe ORDER BY id", []
                ).map { try $0.text(0) }
            }
            #expect(stored == (1...60).map { body(0, $0) })
        }
    }

    static var countsOpenFiles: Bool { FileManager.default.fileExists(atPath: "/proc/self/fd") }

    /// SQLite's temporary files (`etilqs_…`, unlinked when opened) this process holds open.
    static func openTemporaryFiles() -> Int {
        let directory = "/proc/self/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return entries.filter {
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)")) ?? "")
                .contains("etilqs_")
        }.count
    }

    /// `secure_delete` is FAST (2) whatever the library was built with: Debian's libsqlite3
    /// defaults to 1, which writes every page a rewritten long state frees to the log as zeros
    /// (a third of a long history's commit: 110 pages of 4 KiB became 75).
    @Test("writes are durable at commit; the writer caches 64 MiB of pages and each reader 16 MiB")
    func connectionSettings() async throws {
        try await withStore(.sqlite) { store, _ in
            let writer = try await store.write { tx in
                try ["synchronous", "journal_mode", "cache_size", "foreign_keys", "secure_delete"].map {
                    try (tx as! SQLStoreTransaction).connection.query("PRAGMA \($0)", []).first?.text(0)
                }
            }
            #expect(writer == ["2", "wal", "-65536", "1", "2"])
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
