import Foundation
import Testing

@testable import Storage

/// A child process ingesting signed V2 notifications through `Ingestion` from 16 tasks
/// (`StorekeeperTestProbes group-commit`), so `IngestionWriter` commits several batches per
/// transaction, is killed with SIGKILL at random moments. Every notification it acknowledged
/// (printed after `ingest` returned) must then be stored exactly once, with its facts, owner and
/// customer state; replays of earlier notifications must stay single; SQLite must pass
/// `PRAGMA integrity_check`.
@Suite(
    "Group commit crash recovery",
    .enabled(
        if: TestProbes.path != nil,
        "no StorekeeperTestProbes executable beside the tests (set STOREKEEPER_TEST_PROBES)"))
struct GroupCommitCrashTests {
    static let rounds = 24
    static let tasks = 16
    static let appId = "group-commit-crash"

    /// What one killed probe said: its acknowledgments, its last writer statistics, its errors.
    struct Round {
        var acknowledged: [(uuid: String, outcome: String)] = []
        var batches = 0
        var groups = 0
        var errors: [String] = []
        var exitedEarly = false
    }

    @Test("every acknowledged notification survives SIGKILL during group commits, once", arguments: Backend.enabled)
    func killedDuringGroupCommits(backend: Backend) async throws {
        let started = ContinuousClock.now
        let probe = try #require(TestProbes.path)
        let database = try await TestDatabase.make(backend)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "storekeeper-group-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let common = [
            "group-commit", "--database", database.url, "--app", Self.appId, "--ca",
            directory.appendingPathComponent("ca").path, "--tasks", String(Self.tasks),
        ]
        let setup = try await Self.run(probe, common + ["--setup"], in: directory, killAfter: nil)
        try #require(!setup.exitedEarly && setup.errors.isEmpty, "probe setup failed: \(setup.errors)")

        // The outcomes each acknowledged notification was answered with, in order.
        var acknowledged: [String: [String]] = [:]
        var replayedAcknowledged: [String] = []
        var groupedRounds = 0
        var killedWhileRunning = 0
        var roundsWithAcknowledgments = 0
        var errors: [String] = []
        var previous: Set<String> = []
        var previousRound = -1
        for round in 0..<Self.rounds {
            // Replays: two notifications acknowledged earlier (must come back `duplicate`) and two
            // the last round sent but did not acknowledge (in flight at the kill, or never sent).
            let earlier = Array(acknowledged.keys).shuffled().prefix(2)
            var replays = Array(earlier)
            if previousRound >= 0 {
                let highest = previous.compactMap { Self.sequence(ofUUID: $0) }.max() ?? -1
                let unacknowledged = (0..<(highest + 1 + Self.tasks))
                    .map { Self.uuid(round: previousRound, sequence: $0) }
                    .filter { !previous.contains($0) }
                replays += unacknowledged.shuffled().prefix(2)
            }
            var arguments = common + ["--round", String(round)]
            if !replays.isEmpty { arguments += ["--replay", replays.joined(separator: ",")] }
            let result = try await Self.run(
                probe, arguments, in: directory, killAfter: .milliseconds(Int.random(in: 100...600)))
            if !result.exitedEarly { killedWhileRunning += 1 }
            if result.batches > result.groups { groupedRounds += 1 }
            if !result.acknowledged.isEmpty { roundsWithAcknowledgments += 1 }
            errors += result.errors
            for (uuid, outcome) in result.acknowledged {
                if earlier.contains(uuid) {
                    replayedAcknowledged.append(uuid)
                    #expect(
                        outcome == "duplicate",
                        "round \(round): replay of acknowledged \(uuid) was \(outcome): it had been lost")
                }
                acknowledged[uuid, default: []].append(outcome)
            }
            previous = Set(
                result.acknowledged.map(\.uuid).filter { Self.round(ofUUID: $0) == round })
            previousRound = round
        }

        let store = try await database.open(migrate: false)
        let stored = try await Stored.read(from: store)
        let lost = acknowledged.keys.filter { stored.counts[$0] == nil }
        #expect(lost.isEmpty, "\(lost.count) acknowledged notifications lost, e.g. \(lost.sorted().prefix(3))")
        stored.expectWhole()
        if let sqlite = store as? SQLiteStore {
            #expect(try await sqlite.integrityCheck() == "ok")
        }
        await store.close()
        await database.drop()

        #expect(errors.isEmpty, "ingest errors in the probe: \(errors.prefix(3))")
        #expect(killedWhileRunning == Self.rounds, "the probe exited before it was killed")
        #expect(roundsWithAcknowledgments >= Self.rounds / 2, "the probe acknowledged in few rounds")
        #expect(groupedRounds >= 1, "no round committed two batches in one transaction")
        #expect(!replayedAcknowledged.isEmpty, "no acknowledged notification was replayed")
        let elapsed = ContinuousClock.now - started
        print(
            "group-commit crash (\(backend.rawValue)): \(Self.rounds) kills, \(acknowledged.count) acknowledged, "
                + "\(stored.counts.count) stored, \(replayedAcknowledged.count) acknowledged replays, "
                + "\(groupedRounds) rounds grouped, \(elapsed)")
    }

    /// What the probe's ingestions left in the database, for the checks every crash test makes.
    struct Stored {
        /// How many rows each notification UUID has.
        var counts: [String: Int64]
        var unprocessed: Int64
        var withoutFacts: Int64
        var withoutOwner: Int64
        var ownersWithoutState: Int64

        static func read(from store: any Store) async throws -> Stored {
            try await store.read { reader in
                Stored(
                    counts: Dictionary(
                        uniqueKeysWithValues: try reader.sql(
                            "SELECT notification_uuid, COUNT(*) FROM notifications GROUP BY notification_uuid"
                        ).map { (try $0.text(0), try $0.integer(1)) }),
                    unprocessed: try reader.sql("SELECT COUNT(*) FROM notifications WHERE processed_at IS NULL")[0]
                        .integer(0),
                    withoutFacts: try reader.sql(
                        """
                        SELECT COUNT(*) FROM notifications n WHERE NOT EXISTS (
                            SELECT 1 FROM signed_transactions t
                            WHERE t.app_id = n.app_id AND t.original_transaction_id = n.original_transaction_id)
                        """)[0].integer(0),
                    withoutOwner: try reader.sql(
                        """
                        SELECT COUNT(*) FROM notifications n WHERE NOT EXISTS (
                            SELECT 1 FROM customer_transactions c
                            WHERE c.app_id = n.app_id AND c.original_transaction_id = n.original_transaction_id)
                        """)[0].integer(0),
                    ownersWithoutState: try reader.sql(
                        """
                        SELECT COUNT(*) FROM customer_transactions c WHERE NOT EXISTS (
                            SELECT 1 FROM customer_states s WHERE s.customer_id = c.customer_id)
                        """)[0].integer(0))
            }
        }

        /// Each notification once, each with the rest of its ingestion.
        func expectWhole(sourceLocation: SourceLocation = #_sourceLocation) {
            let repeated = counts.filter { $0.value != 1 }
            #expect(
                repeated.isEmpty, "notifications stored more than once: \(repeated.keys.sorted().prefix(3))",
                sourceLocation: sourceLocation)
            #expect(
                unprocessed == 0, "a notification stored without the rest of its ingestion",
                sourceLocation: sourceLocation)
            #expect(
                withoutFacts == 0, "\(withoutFacts) notifications without their transaction row",
                sourceLocation: sourceLocation)
            #expect(
                withoutOwner == 0, "\(withoutOwner) notifications whose purchase has no owner",
                sourceLocation: sourceLocation)
            #expect(
                ownersWithoutState == 0, "\(ownersWithoutState) owned purchases without customer state",
                sourceLocation: sourceLocation)
        }
    }

    /// Runs the probe with stdout and stderr in files (so nothing it wrote before the kill is
    /// lost in a pipe) and SIGKILLs it `killAfter` after its first acknowledgment, or waits for it
    /// to exit.
    static func run(_ probe: String, _ arguments: [String], in directory: URL, killAfter: Duration?) async throws
        -> Round
    {
        let stdout = directory.appendingPathComponent("stdout")
        let stderr = directory.appendingPathComponent("stderr")
        for file in [stdout, stderr] {
            try #require(FileManager.default.createFile(atPath: file.path, contents: nil), "cannot create \(file.path)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: probe)
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        var round = Round()
        if let killAfter {
            // The clock starts at the probe's first acknowledgment, so the kill lands among
            // group commits (the next group is queued by then), not in its start-up, which the
            // plain crash test covers, however slow a loaded machine makes that start-up.
            let deadline = ContinuousClock.now + .seconds(20)
            while process.isRunning, ContinuousClock.now < deadline,
                try FileManager.default.attributesOfItem(atPath: stdout.path)[.size] as? UInt64 ?? 0 == 0
            {
                try await Task.sleep(for: .milliseconds(5))
            }
            try await Task.sleep(for: killAfter)
            round.exitedEarly = !process.isRunning
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        } else {
            while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
            round.exitedEarly = process.terminationStatus != 0
        }
        // Only complete lines count: a torn last line was not acknowledged.
        for line in try completeLines(stdout) {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 3, fields[0] == "ack" else { continue }
            round.acknowledged.append((fields[1], fields[2]))
        }
        for line in try completeLines(stderr) {
            if line == "ready" {
                continue
            } else if line.hasPrefix("stats ") {
                let values = Dictionary(
                    uniqueKeysWithValues: line.split(separator: " ").dropFirst().compactMap { field in
                        let parts = field.split(separator: "=")
                        return parts.count == 2 ? (String(parts[0]), Int(parts[1]) ?? 0) : nil
                    })
                round.batches = values["batches"] ?? 0
                round.groups = values["groups"] ?? 0
            } else {
                round.errors.append(line)
            }
        }
        return round
    }

    static func completeLines(_ file: URL) throws -> [String] {
        var lines = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()
        return lines
    }

    /// The probe's naming: the round in the UUID's first group, the sequence in its last.
    static func uuid(round: Int, sequence: Int) -> String {
        let roundHex = String(round, radix: 16)
        let sequenceHex = String(sequence, radix: 16)
        return String(repeating: "0", count: 8 - roundHex.count) + roundHex + "-0000-4000-8000-"
            + String(repeating: "0", count: 12 - sequenceHex.count) + sequenceHex
    }

    static func round(ofUUID uuid: String) -> Int? { uuid.split(separator: "-").first.flatMap { Int($0, radix: 16) } }

    static func sequence(ofUUID uuid: String) -> Int? { uuid.split(separator: "-").last.flatMap { Int($0, radix: 16) } }
}
