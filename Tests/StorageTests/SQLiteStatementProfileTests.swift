import AppStoreModels
import Foundation
import Testing

@testable import Storage

/// `sqliteStatementProfile`: the statements the writer and the readers ran, counted exactly, in
/// a file written when the store closes; a path that cannot be written is refused at open.
@Suite struct SQLiteStatementProfileTests {
    struct Line: Equatable {
        var totalMilliseconds: Double
        var count: Int
        var statement: String
    }

    static func lines(_ path: String) throws -> [Line] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "total_ms\tcount\tmean_us\tstatement")
        #expect(lines.last == "")
        lines = Array(lines.dropFirst().dropLast())
        return try lines.map { line in
            let fields = line.split(separator: "\t", maxSplits: 3).map(String.init)
            try #require(fields.count == 4, "\(line)")
            return Line(
                totalMilliseconds: try #require(Double(fields[0])), count: try #require(Int(fields[1])),
                statement: fields[3])
        }
    }

    @Test func countsEveryStatementByText() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sk_profile_\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let profile = directory.appendingPathComponent("statements.tsv").path
        let store = try await SQLiteStore.open(
            path: directory.appendingPathComponent("db.sqlite").path, statementProfile: profile)
        // Written at open: only the header.
        #expect(try Self.lines(profile) == [])
        let at = Timestamp(millisecondsSince1970: 1_700_000_000_000)
        for action in ["one", "two", "three"] {
            _ = try await store.write { transaction in
                try transaction.appendAudit(NewAuditEntry(at: at, actor: "test", action: action, appId: nil))
            }
        }
        for _ in 0..<2 {
            let entries = try await store.read { reader in try reader.auditEntries(after: nil, limit: 10) }
            #expect(entries.map(\.action) == ["one", "two", "three"])
        }
        await store.close()

        let lines = try Self.lines(profile)
        // SQLite's texts, placeholders as the connection prepared them, one line per statement.
        let insert = lines.filter { $0.statement.hasPrefix("INSERT INTO audit_log") }
        #expect(insert.map(\.count) == [3])
        // Timed on a clock finer than SQLite's own (whole milliseconds, which gives three inserts
        // of some microseconds each 0): never nothing.
        #expect(insert.first.map { $0.totalMilliseconds > 0 } == true)
        #expect(
            insert.first?.statement
                == "INSERT INTO audit_log (at, actor, action, app_id, detail_json) VALUES (?, ?, ?, ?, ?) RETURNING id")
        #expect(lines.filter { $0.statement.hasPrefix("SELECT id, at, actor, action") }.map(\.count) == [2])
        // Each write is its own transaction; the two reads began theirs on the readers.
        #expect(lines.first { $0.statement == "BEGIN IMMEDIATE" }.map(\.count).map { $0 >= 3 } == true)
        #expect(lines.filter { $0.statement == "BEGIN" }.map(\.count) == [2])
        #expect(lines.allSatisfy { $0.totalMilliseconds >= 0 && $0.count > 0 })
        // Costliest first.
        #expect(lines.map(\.totalMilliseconds) == lines.map(\.totalMilliseconds).sorted(by: >))
        // Each text once.
        #expect(Set(lines.map(\.statement)).count == lines.count)
    }

    @Test func refusesAFileItCannotWrite() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("sk_missing_\(UUID().uuidString)")
        let database = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sk_profile_\(UUID().uuidString).db")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + suffix) }
        }
        await #expect(throws: StoreError.self) {
            _ = try await SQLiteStore.open(
                path: database.path, statementProfile: missing.appendingPathComponent("statements.tsv").path)
        }
        #expect(!FileManager.default.fileExists(atPath: database.path))
    }

    @Test func refusedForPostgreSQL() async throws {
        let location = try StoreLocation("postgres://user@127.0.0.1:1/none")
        await #expect(
            throws: StoreError(
                .invalidConfiguration,
                "a statement profile is kept for SQLite only; on PostgreSQL use its pg_stat_statements")
        ) {
            _ = try await location.open(statementProfile: "/tmp/never-written.tsv")
        }
    }
}
