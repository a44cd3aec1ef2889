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
            """,
        options: [Option(name: "--database", valueName: "URL", help: "the database", isRequired: true)],
        flags: [
            Flag(
                name: "--check",
                help: "do not migrate; exit 1 if migrations are pending or the schema is newer than this binary")
        ],
        action: { try await run($0) })

    static func run(_ parsed: CommandLineArguments) async throws -> Int32 {
        let progress = MigrationProgress()
        let interrupt = InterruptRequest()
        defer { interrupt.cancel() }
        let observer = MigrationObserver(
            applied: { _, done, pending in progress.applied(done: done, pending: pending) },
            shouldStop: { interrupt.isRequested })
        let applied = try await StoreLocation(try parsed.require("--database")).migrate(
            apply: !parsed.has("--check"), observer: observer)
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

    /// The progress of the migrations applied, built on the first one (when the number pending
    /// is known), so an up-to-date database prints none.
    /// - Note: Thread-safe: the state sits behind a `Mutex`.
    private final class MigrationProgress: Sendable {
        private let state = Mutex<(reporter: ProgressReporter?, done: Int, pending: Int)>((nil, 0, 0))

        func applied(done: Int, pending: Int) {
            state.withLock {
                if $0.reporter == nil { $0.reporter = ProgressReporter(label: "migrate", total: pending) }
                $0.reporter?.advance()
                $0.done = done
                $0.pending = pending
            }
        }

        /// Prints the last line; returns how many migrations are left.
        func finish(interrupted: Bool) -> Int {
            state.withLock {
                let left = $0.pending - $0.done
                $0.reporter?.finish(interrupted: interrupted && left > 0)
                return left
            }
        }
    }
}
