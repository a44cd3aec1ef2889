import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

/// PostgreSQL itself crashes under load: the group-commit probe ingests signed notifications
/// through `Ingestion` from 8 tasks, resending what fails retryably as Apple resends after a
/// 503 (`--retry-seconds`), while the server is stopped with `pg_ctl stop -m immediate` (every
/// backend killed, no checkpoint; the next start recovers from the WAL) and started again,
/// twice. The probe process is not restarted: its store must reconnect by itself. Afterwards
/// every notification it acknowledged is stored exactly once, with its facts, owner and state,
/// including those whose `COMMIT` was cut off before its answer (resent, they come back
/// `duplicate`).
///
/// The test runs its own cluster (`scripts/postgres-test.sh start` in a temp dir), never the
/// shared one `STOREKEEPER_TEST_POSTGRES_URL` names, whose other users a crash would disturb.
@Suite(
    "PostgreSQL crash under load",
    .enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage),
    .enabled(
        if: TestProbes.path != nil,
        "no StorekeeperTestProbes executable beside the tests (set STOREKEEPER_TEST_PROBES)"),
    .enabled(if: PrivateCluster.isAvailable, "no pg_ctl in PG_BIN or /usr/lib/postgresql/15/bin"))
struct PostgresCrashTests {
    static let stops = 2
    static let tasks = 8
    static let appId = "pg-crash"
    /// Generous for a loaded machine; the checks never wait this long when things work.
    static let patience = Duration.seconds(60)

    @Test("every acknowledged notification is stored once after immediate stops under load")
    func immediateStopsUnderLoad() async throws {
        let started = ContinuousClock.now
        let probe = try #require(TestProbes.path)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "storekeeper-pg-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cluster = try PrivateCluster.start(stateDirectory: directory.appendingPathComponent("cluster"))
        defer { cluster.remove() }
        let common = [
            "group-commit", "--database", cluster.url, "--app", Self.appId, "--ca",
            directory.appendingPathComponent("ca").path, "--tasks", String(Self.tasks),
        ]
        let setup = try await GroupCommitCrashTests.run(probe, common + ["--setup"], in: directory, killAfter: nil)
        try #require(!setup.exitedEarly && setup.errors.isEmpty, "probe setup failed: \(setup.errors)")

        let stdout = directory.appendingPathComponent("stdout")
        let stderr = directory.appendingPathComponent("stderr")
        for file in [stdout, stderr] {
            try #require(FileManager.default.createFile(atPath: file.path, contents: nil), "cannot create \(file.path)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: probe)
        process.arguments = common + ["--round", "0", "--retry-seconds", "60"]
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        defer {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        func acknowledgments() throws -> Int {
            try GroupCommitCrashTests.completeLines(stdout).count { $0.hasPrefix("ack ") }
        }
        /// Waits until the probe has acknowledged `count` notifications; false after `patience`.
        func awaitAcknowledgments(_ count: Int) async throws -> Bool {
            let deadline = ContinuousClock.now + Self.patience
            while try acknowledgments() < count {
                guard process.isRunning, ContinuousClock.now < deadline else { return false }
                try await Task.sleep(for: .milliseconds(20))
            }
            return true
        }

        try #require(try await awaitAcknowledgments(1), "the probe acknowledged nothing before the first stop")
        var resumedAfter: [Int] = []
        for stop in 0..<Self.stops {
            // Load, then the crash while ingestions are in flight.
            try await Task.sleep(for: .milliseconds(700))
            try cluster.halt(mode: "immediate")
            try await Task.sleep(for: .milliseconds(300))
            let atRestart = try acknowledgments()
            try cluster.resume()
            // The same process keeps going: new acknowledgments after the restart.
            let resumed = try await awaitAcknowledgments(atRestart + Self.tasks)
            try #require(resumed, "stop \(stop + 1): no new acknowledgments after the restart")
            resumedAfter.append(try acknowledgments() - atRestart)
        }
        try await Task.sleep(for: .milliseconds(300))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()

        var acknowledged: [String: [String]] = [:]
        for line in try GroupCommitCrashTests.completeLines(stdout) {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 3, fields[0] == "ack" else { continue }
            acknowledged[fields[1], default: []].append(fields[2])
        }
        var retries = 0
        var errors: [String] = []
        for line in try GroupCommitCrashTests.completeLines(stderr) {
            if line == "ready" || line.hasPrefix("stats ") { continue }
            if line.hasPrefix("retry ") { retries += 1 } else { errors.append(line) }
        }

        let store = try await StoreLocation(cluster.url).open(migrate: false)
        let stored = try await GroupCommitCrashTests.Stored.read(from: store)
        await store.close()
        let lost = acknowledged.keys.filter { stored.counts[$0] == nil }
        #expect(lost.isEmpty, "\(lost.count) acknowledged notifications lost, e.g. \(lost.sorted().prefix(3))")
        stored.expectWhole()
        let twice = acknowledged.filter { $0.value.count != 1 }
        #expect(twice.isEmpty, "notifications acknowledged more than once: \(twice.keys.sorted().prefix(3))")
        #expect(errors.isEmpty, "the probe gave up on or failed ingestions: \(errors.prefix(3))")
        #expect(retries > 0, "no ingestion failed while PostgreSQL was down: the stops missed the load")
        let inDoubt = acknowledged.values.filter { $0 == ["duplicate"] }.count
        print(
            "postgres crash: \(Self.stops) immediate stops, \(acknowledged.count) acknowledged, "
                + "\(stored.counts.count) stored, \(retries) resends, \(inDoubt) committed before a lost answer, "
                + "acknowledged after each restart \(resumedAfter), \(ContinuousClock.now - started)")
    }
}

/// A PostgreSQL cluster of one test's own, driven through `scripts/postgres-test.sh` (which
/// runs the server as an unprivileged user when the tests run as root).
struct PrivateCluster {
    static let script = Conformance.repositoryRoot.appendingPathComponent("scripts/postgres-test.sh").path
    static let binaries = ProcessInfo.processInfo.environment["PG_BIN"] ?? "/usr/lib/postgresql/15/bin"
    static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: binaries + "/pg_ctl")
            && FileManager.default.isExecutableFile(atPath: script)
    }

    let stateDirectory: URL
    let url: String

    /// initdb in a temp dir and start on a free loopback port.
    static func start(stateDirectory: URL) throws -> PrivateCluster {
        let output = try run(["start", stateDirectory.path])
        let url = output.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
        try #require(url.hasPrefix("postgres://"), "postgres-test.sh start printed \(output)")
        return PrivateCluster(stateDirectory: stateDirectory, url: url)
    }

    /// `pg_ctl stop -m mode`, keeping the data.
    func halt(mode: String) throws { _ = try Self.run(["halt", stateDirectory.path, mode]) }

    /// Starts the halted server again on its port; returns once it accepts connections.
    func resume() throws { _ = try Self.run(["resume", stateDirectory.path]) }

    /// Stops the server and deletes its data.
    func remove() { _ = try? Self.run(["stop", stateDirectory.path]) }

    /// Runs the script; its output (stdout and stderr in one pipe, so neither can fill up
    /// unread); throws unless it exited 0.
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        // Bounded: Foundation reports the exit only once every inherited descriptor of the
        // child is closed, so a server that kept one would make `waitUntilExit` wait forever.
        let deadline = ContinuousClock.now + .seconds(120)
        while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        try #require(
            !process.isRunning,
            "postgres-test.sh \(arguments.joined(separator: " ")) did not report its exit: \(text)")
        try #require(
            process.terminationStatus == 0, "postgres-test.sh \(arguments.joined(separator: " ")) failed: \(text)")
        return text
    }
}
