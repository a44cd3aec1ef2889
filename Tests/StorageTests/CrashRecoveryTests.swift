import Foundation
import Testing

@testable import Storage

/// A child process ingesting in a loop (`StorekeeperTestProbes crash`) is killed with
/// SIGKILL at random moments; after each kill every ingestion it acknowledged (printed after
/// COMMIT) must be in the database, whole, and SQLite must pass `PRAGMA integrity_check`.
@Suite(
    "Crash recovery",
    .enabled(
        if: TestProbes.path != nil,
        "no StorekeeperTestProbes executable beside the tests (set STOREKEEPER_TEST_PROBES)"))
struct CrashRecoveryTests {
    static let rounds = 20

    @Test("every acknowledged ingestion survives SIGKILL", arguments: Backend.enabled)
    func killedRepeatedly(backend: Backend) async throws {
        let probe = try #require(TestProbes.path)
        let database = try await TestDatabase.make(backend)
        var acknowledged: Set<String> = []
        var killedMidLoop = 0
        for round in 0..<Self.rounds {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: probe)
            process.arguments = ["crash", "--database", database.url, "--prefix", "r\(round)"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            try await Task.sleep(for: .milliseconds(Int.random(in: 150...450)))
            if process.isRunning { killedMidLoop += 1 }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            // Only complete lines were acknowledged; a torn last line was not.
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            lines.removeLast()
            acknowledged.formUnion(lines)

            let store = try await database.open()
            let (stored, unprocessed) = try await store.read { reader in
                (
                    Set(try reader.sql("SELECT notification_uuid FROM notifications").map { try $0.text(0) }),
                    try reader.sql("SELECT COUNT(*) FROM notifications WHERE processed_at IS NULL")[0].integer(0)
                )
            }
            #expect(
                acknowledged.isSubset(of: stored),
                "round \(round): \(acknowledged.subtracting(stored).count) acknowledged ingestions lost")
            #expect(unprocessed == 0, "round \(round): a notification without the rest of its ingestion")
            if let sqlite = store as? SQLiteStore {
                #expect(try await sqlite.integrityCheck() == "ok", "round \(round)")
            }
            await store.close()
        }
        #expect(killedMidLoop >= Self.rounds - 2, "the probe was killed while ingesting")
        #expect(acknowledged.count >= Self.rounds, "the probe acknowledged ingestions (\(acknowledged.count))")
        await database.drop()
    }
}

/// Where the probes the storage tests spawn are: `STOREKEEPER_TEST_PROBES`, or the
/// `StorekeeperTestProbes` executable in the build directory the tests run from.
enum TestProbes {
    static let path: String? = {
        if let path = ProcessInfo.processInfo.environment["STOREKEEPER_TEST_PROBES"] { return path }
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            return nil
        }
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("StorekeeperTestProbes").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return nil
    }()
}
