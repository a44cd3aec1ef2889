import Foundation
import Storage
import Synchronization

/// `storekeeper migrate`: applies the pending schema migrations
/// (each in its own transaction, under a lock so concurrent migrators wait for each other)
/// and prints what it applied; `--check` only reports. When there is work, progress goes to
/// standard error (`ProgressReporter`); Ctrl-C stops after the migration in progress, and
/// running the command again applies the rest.
///
/// Exit codes: 0 done (or up to date), 1 storage error (schema newer than this binary,
/// pending migrations with `--check`, failed migration, unreachable database), 2 usage,
/// 130 interrupted.
enum MigrateCommand {
    static let command: Command = Command(
        name: "migrate", summary: "apply schema migrations (SQLite path or postgres:// URL)",
        discussion: """
            URL: a file path, sqlite:PATH, or postgres://user@host:port/db[?pool_size=N&statement_timeout=MS&prepared_statements=off]
            Exit codes: 0 done or up to date, 1 storage error (schema newer than this binary, pending
            migrations with --check, a failed migration, an unreachable database), 2 usage,
            130 interrupted (Ctrl-C stops after the migration in progress; run it again for the rest).
            Progress goes to standard error; a migration that runs long (one rebuilding tables of a
            large database) is named there while it runs, every STOREKEEPER_PROGRESS_INTERVAL
            seconds (default 10) without a terminal.
            """,
        options: [Option(name: "--database", valueName: "URL", help: "the database", isRequired: true)],
        flags: [
            Flag(
                name: "--check",
                help: "do not migrate; exit 1 if migrations are pending or the schema is newer than this binary")
        ],
        action: { try await run($0) })

    static func run(_ parsed: CommandLineArguments) async throws -> Int32 {
        let progress = MigrationProgress(interval: progressInterval(ProcessInfo.processInfo.environment))
        let interrupt = InterruptRequest()
        defer { interrupt.cancel() }
        let observer = MigrationObserver(
            starting: { identifier, index, pending in
                progress.starting(identifier: identifier, index: index, pending: pending)
            },
            applied: { _, done, pending in progress.applied(done: done, pending: pending) },
            shouldStop: { interrupt.isRequested })
        // A migration that rebuilds tables runs for minutes on a large database, one transaction
        // with nothing counted: it is named on standard error while it runs.
        let heartbeat = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Int(min(progress.interval, 1) * 1_000)))
                progress.heartbeat()
            }
        }
        defer { heartbeat.cancel() }
        let applied = try await StoreLocation(try parsed.require("--database")).migrate(
            apply: !parsed.has("--check"), observer: observer)
        heartbeat.cancel()
        let left = progress.finish(interrupted: interrupt.isRequested)
        for identifier in applied { print("applied \(identifier)") }
        if left > 0 {
            FileHandle.standardError.write(
                Data("interrupted: \(left) migrations left; run storekeeper migrate again to apply them\n".utf8))
            return 130
        }
        print(
            "schema up to date: \(Migration.all.count) migrations, latest \(Migration.all.last?.identifier ?? "none")")
        return 0
    }

    /// Seconds between the lines naming a long migration without a terminal:
    /// `STOREKEEPER_PROGRESS_INTERVAL` (tests shorten it), else the reporter's ten.
    static func progressInterval(_ environment: [String: String]) -> Double {
        guard let text = environment["STOREKEEPER_PROGRESS_INTERVAL"], let seconds = Double(text), seconds > 0,
            seconds.isFinite
        else { return 10 }
        return seconds
    }

    /// The progress of the migrations, built when the first one starts (when the number pending
    /// is known, and so the time shown covers the work), so an up-to-date database prints none.
    /// - Note: Thread-safe: the state sits behind a `Mutex`.
    private final class MigrationProgress: Sendable {
        private struct State {
            var reporter: ProgressReporter?
            var done = 0
            var pending = 0
            /// What runs now, for the heartbeat: `applying <identifier> (<n> of <pending>)`, and
            /// since when.
            var current: (text: String, since: ContinuousClock.Instant)?
        }

        let interval: Double
        private let state = Mutex(State())

        init(interval: Double) { self.interval = interval }

        func starting(identifier: String, index: Int, pending: Int) {
            state.withLock {
                if $0.reporter == nil {
                    $0.reporter = ProgressReporter(label: "migrate", total: pending, interval: interval)
                }
                $0.current = ("applying \(identifier) (\(index) of \(pending))", ContinuousClock.now)
            }
        }

        /// After `starting` (the migrator tells of each migration before it applies it).
        func applied(done: Int, pending: Int) {
            state.withLock {
                $0.reporter?.advance()
                $0.done = done
                $0.pending = pending
                $0.current = nil
            }
        }

        /// Names the migration running and how long it has run, if one is (at the reporter's pace).
        func heartbeat() {
            let (reporter, current) = state.withLock { ($0.reporter, $0.current) }
            guard let reporter, let current else { return }
            let seconds = (ContinuousClock.now - current.since) / .seconds(1)
            reporter.note(current.text + ", \(ProgressReporter.duration(seconds)) so far")
        }

        /// Prints the last line; returns how many migrations are left.
        func finish(interrupted: Bool) -> Int {
            state.withLock {
                $0.current = nil
                let left = $0.pending - $0.done
                $0.reporter?.finish(interrupted: interrupted && left > 0)
                return left
            }
        }
    }
}
