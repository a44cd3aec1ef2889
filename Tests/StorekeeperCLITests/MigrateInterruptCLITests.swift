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
