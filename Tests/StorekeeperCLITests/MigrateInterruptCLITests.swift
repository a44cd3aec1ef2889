import Foundation
import Testing

@testable import Storage

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 14: Ctrl-C (SIGINT) during `migrate` with work to do stops after the migration in
/// progress, exits 130 and says how to resume; running it again applies the rest.
///
/// Deterministic without timing: the database has its first migration only, the test holds
/// its write lock while `migrate` starts, sends SIGINT once the child has taken over the signal
/// (as /proc shows), then lets go of the lock. The child applies the
/// migration it was waiting to apply and stops before the next.
struct MigrateInterruptCLITests {
    @Test func interruptedMigrateStopsAfterTheMigrationInProgressAndResumes() async throws {
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let all = Migration.all.map(\.identifier)
        let first = try await StoreLocation(path).migrate(observer: MigrationObserver(shouldStop: { true }))
        #expect(first == [all[0]])

        let holder = try SQLiteConnection(path: path, readOnly: false, busyTimeoutMilliseconds: 5_000)
        _ = try holder.execute("BEGIN IMMEDIATE", [])
        let child = try ChildProcess(["migrate", "--database", path], in: directory)
        let deadline = ContinuousClock.now + .seconds(60)
        while !Self.handlesInterrupt(child.process.processIdentifier), child.process.isRunning,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(Self.handlesInterrupt(child.process.processIdentifier))
        // The disposition is set just before the dispatch source is made: a moment for it.
        try await Task.sleep(for: .milliseconds(200))
        child.signal(SIGINT)
        // The source's handler runs on a queue of its own: let it record the request before the
        // child can go on.
        try await Task.sleep(for: .milliseconds(200))
        _ = try holder.execute("COMMIT", [])
        holder.close()

        #expect(try await child.exit() == (130, false))
        #expect(child.stdout == "applied \(all[1])\n")
        let lines = child.stderr.split(separator: "\n").map(String.init)
        // The last progress line (with twelve or more pending, the only one), then how to resume.
        #expect(
            lines.dropLast().last?.wholeMatch(
                of: try Regex("migrate: 1/\(all.count - 1) \\(\\d+%\\) \\(interrupted\\) in \\S+, \\S+/s")) != nil,
            "\(lines)")
        #expect(
            lines.last == "interrupted: \(all.count - 2) migrations left; run storekeeper migrate again to apply them")

        let resumed = try ChildProcess(["migrate", "--database", path], in: directory)
        #expect(try await resumed.exit() == (0, false))
        #expect(
            resumed.stdout
                == all.dropFirst(2).map { "applied \($0)\n" }.joined()
                + "schema up to date: \(all.count) migrations, latest \(all.last!)\n")
    }

    /// A migration that runs long (0025 rebuilding a large SQLite store's fact tables) is named
    /// on standard error while it runs, and the time printed at the end covers it: the progress
    /// began at the first migration applied and said nothing meanwhile ("in 0.5s" after 8 s).
    @Test func aLongMigrationIsNamedWhileItRunsAndItsTimeCounted() async throws {
        let directory = try CLITests().temporaryDirectory()
        let path = directory.appendingPathComponent("store.sqlite").path
        let all = Migration.all.map(\.identifier)
        let long = Migration.factsBeforePayloads.identifier
        _ = try await StoreLocation(path).migrate()
        // 6,000 notifications of Apple's size (about 70 MB), then 0025 pending again (its
        // rebuild gives the same tables whatever their column order).
        let connection = try SQLiteConnection(path: path, readOnly: false, busyTimeoutMilliseconds: 5_000)
        try connection.executeScript(
            """
            BEGIN;
            INSERT INTO apps (id, bundle_id, environments, settings_json, created_at, updated_at)
            VALUES ('app', 'com.example', 'Production', '{}', 0, 0);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000)
            INSERT INTO notifications (app_id, notification_uuid, notification_type, signed_date, signed_payload,
                                       received_at)
            SELECT 'app', 'n-' || i, 'DID_RENEW', i, printf('%.11600c', 'A'), i FROM n;
            DELETE FROM schema_migrations WHERE identifier = '\(long)';
            COMMIT;
            """)
        connection.close()

        let child = try ChildProcess(
            ["migrate", "--database", path], in: directory, environment: ["STOREKEEPER_PROGRESS_INTERVAL": "0.02"])
        let started = ContinuousClock.now
        #expect(try await child.exit() == (0, false))
        let took = ContinuousClock.now - started
        #expect(
            child.stdout == "applied \(long)\nschema up to date: \(all.count) migrations, latest \(all.last!)\n")
        let lines = child.stderr.split(separator: "\n").map(String.init)
        let running = try Regex("migrate: 0/1 \\(0%\\), \\S+/s, applying \(long) \\(1 of 1\\), \\S+ so far")
        #expect(lines.dropLast().contains { $0.wholeMatch(of: running) != nil }, "\(lines)")
        let final = try #require(lines.last?.wholeMatch(of: /migrate: 1\/1 \(100%\) in (\d+(?:\.\d)?)s, \S+\/s/))
        // The time printed covers the rebuild (most of the run), not what followed it.
        let printed = try #require(Double(final.1))
        let total = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
        #expect(printed >= total / 3, "printed \(printed) s of a \(total) s run")
        let store = try await StoreLocation(path).open(migrate: false)
        #expect(try await store.read { try $0.appliedMigrations() } == all)
        await store.close()
    }

    /// `serve` logs each migration it applies to an existing database before it listens (one
    /// that rebuilds a large store's tables runs for minutes): `server.migrating` with its place,
    /// `server.migrated` with its time; nothing for a new database's schema, nor when the schema
    /// is up to date.
    @Test func serveLogsTheMigrationsItAppliesToAnExistingDatabase() async throws {
        let server = SecretsCLITests()
        let directory = try CLITests().temporaryDirectory()
        let path = directory.appendingPathComponent("store.sqlite").path
        let serve = ["serve", "--database", path, "--listen", "127.0.0.1:0"]
        let key = directory.appendingPathComponent("secrets.key").path
        #expect(try server.run(["secrets", "new-key", key]).status == 0)
        let environment = ["STOREKEEPER_SECRETS_KEY_FILE": key]
        let all = Migration.all.map(\.identifier)
        func events(_ logged: String) throws -> [[String: String]] {
            try logged.split(separator: "\n").compactMap { line in
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
                return object?["event"]?.hasPrefix("server.migrat") == true ? object : nil
            }
        }
        #expect(try events(try await server.serveBriefly(serve, environment: environment) { _ in }).isEmpty)

        // The two table rebuilds pending again (their SQL runs again on the tables as they are).
        let rebuilds = [Migration.inlineFactRows.identifier, Migration.factsBeforePayloads.identifier]
        #expect(rebuilds.allSatisfy(all.contains))
        let connection = try SQLiteConnection(path: path, readOnly: false, busyTimeoutMilliseconds: 5_000)
        _ = try connection.execute(
            "DELETE FROM schema_migrations WHERE identifier IN ($1, $2)", [.text(rebuilds[0]), .text(rebuilds[1])])
        connection.close()
        let logged = try events(try await server.serveBriefly(serve, environment: environment) { _ in })
        #expect(logged.count == 4, "\(logged)")
        for (index, identifier) in rebuilds.enumerated() where logged.count == 4 {
            #expect(
                logged[2 * index]
                    == ["event": "server.migrating", "migration": identifier, "index": "\(index + 1)", "pending": "2"])
            #expect(logged[2 * index + 1]["event"] == "server.migrated")
            #expect(logged[2 * index + 1]["migration"] == identifier)
            #expect(logged[2 * index + 1]["milliseconds"].flatMap(Int.init).map { $0 >= 0 } == true)
        }
        #expect(try events(try await server.serveBriefly(serve, environment: environment) { _ in }).isEmpty)
    }

    /// Whether the process has taken over SIGINT: its `InterruptRequest` sets the disposition to
    /// `SIG_IGN` and a dispatch source then catches it (the `SigIgn` and `SigCgt` masks of
    /// /proc/PID/status).
    static func handlesInterrupt(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        let bit = UInt64(1) << (UInt64(SIGINT) - 1)
        return status.split(separator: "\n").contains { line in
            guard line.hasPrefix("SigIgn:") || line.hasPrefix("SigCgt:"),
                let mask = UInt64(line.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16)
            else { return false }
            return mask & bit != 0
        }
    }
}
