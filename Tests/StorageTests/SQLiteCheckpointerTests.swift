import Foundation
import Testing

@testable import Storage

/// The write-ahead log is checkpointed on a connection of its own, not by the writer, and
/// stays bounded either way.
@Suite struct SQLiteCheckpointerTests {
    /// Writes `transactions` transactions of `rows` new 4 KB rows each (a page apiece).
    static func write(_ store: SQLiteStore, transactions: Int, rows: Int) async throws {
        try await store.write { tx in
            try (tx as! SQLStoreTransaction).connection.executeScript(
                "CREATE TABLE IF NOT EXISTS log_probe (id INTEGER PRIMARY KEY, body TEXT)")
        }
        for round in 0..<transactions {
            try await store.write { tx in
                let connection = (tx as! SQLStoreTransaction).connection
                for row in 0..<rows {
                    _ = try connection.execute(
                        "INSERT INTO log_probe (body) VALUES ($1)",
                        [.text("\(round)-\(row)-" + String(repeating: "x", count: 3_900))])
                }
            }
        }
    }

    static func rows(_ store: SQLiteStore) async throws -> Int64? {
        try await store.read { reader in
            try (reader as! SQLStoreTransaction).connection.query("SELECT COUNT(*) FROM log_probe", []).first?
                .integer(0)
        }
    }

    /// Whether another process sees a lock on SQLite's shared-lock bytes of `path` (fcntl
    /// `F_GETLK` from a child: a process never conflicts with its own locks).
    static func sharedLockHeld(_ path: String) throws -> String {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        child.arguments = [
            "python3", "-c",
            """
            import fcntl, os, struct, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            lock = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0x40000000 + 2, 510, 0)
            answer = fcntl.fcntl(fd, fcntl.F_GETLK, lock)
            print("held" if struct.unpack("hhqqi", answer)[0] != fcntl.F_UNLCK else "free")
            """, path,
        ]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        child.waitUntilExit()
        return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func withDirectory<R>(_ body: (String) async throws -> R) async throws -> R {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sk_checkpoint_\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory.appendingPathComponent("store.db").path)
    }

    static func walFrames(_ path: String) -> Int {
        let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        return size / (4_096 + 24)
    }

    @Test("past the threshold the log is checkpointed beside the writer, which never checkpoints")
    func checkpointsRunOnTheirOwnConnection() async throws {
        try await Self.withDirectory { path in
            let store = try await SQLiteStore.open(
                path: path, checkpoints: SQLiteCheckpointer.Settings(threshold: 100, writerLimit: 1_000_000))
            try await Self.write(store, transactions: 60, rows: 20)
            let deadline = ContinuousClock.now + .seconds(10)
            while store.checkpointStatistics.background == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            let statistics = store.checkpointStatistics
            #expect(statistics.background > 0)
            #expect(statistics.onWriter == 0)
            #expect(statistics.failures == 0)
            // The checkpoints synced the file without dropping the process's locks on it: SQLite's
            // shared lock, which keeps another process from deleting the log, is still held.
            #expect(try Self.sharedLockHeld(path) == "held")
            #expect(try await Self.rows(store) == 1_200)
            #expect(try await store.integrityCheck() == "ok")
            await store.close()
        }
    }

    /// Under back-to-back commits the writer is always in a transaction, so the log never starts
    /// over from the background checkpoints alone: the writer's own at its limit keeps it short.
    @Test("with both, the log stays within the writer's limit and every row is kept")
    func theLogStaysBounded() async throws {
        try await Self.withDirectory { path in
            let store = try await SQLiteStore.open(
                path: path, checkpoints: SQLiteCheckpointer.Settings(threshold: 100, writerLimit: 400))
            try await Self.write(store, transactions: 80, rows: 20)
            #expect(Self.walFrames(path) < 700)
            #expect(store.checkpointStatistics.failures == 0)
            await store.close()
            let reopened = try await SQLiteStore.open(path: path)
            #expect(try await Self.rows(reopened) == 1_600)
            #expect(try await reopened.integrityCheck() == "ok")
            await reopened.close()
        }
    }

    @Test("a log past the writer's limit is checkpointed by the writer itself")
    func theWriterCheckpointsPastItsLimit() async throws {
        try await Self.withDirectory { path in
            let store = try await SQLiteStore.open(
                path: path, checkpoints: SQLiteCheckpointer.Settings(threshold: 1_000_000, writerLimit: 100))
            try await Self.write(store, transactions: 30, rows: 20)
            let statistics = store.checkpointStatistics
            #expect(statistics.onWriter > 0)
            #expect(statistics.background == 0)
            #expect(Self.walFrames(path) < 300)
            await store.close()
            // Everything is there after reopening.
            let reopened = try await SQLiteStore.open(path: path)
            #expect(try await Self.rows(reopened) == 600)
            await reopened.close()
        }
    }
}
