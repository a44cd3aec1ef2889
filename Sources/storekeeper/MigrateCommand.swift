import Foundation
import Storage

/// `storekeeper migrate`: applies the pending schema migrations
/// (each in its own transaction, under a lock so concurrent migrators wait for each other)
/// and prints what it applied; `--check` only reports.
///
/// Exit codes: 0 done (or up to date), 1 storage error (schema newer than this binary,
/// pending migrations with `--check`, failed migration, unreachable database), 2 usage.
enum MigrateCommand {
    static let command: Command = Command(
        name: "migrate", summary: "apply schema migrations (SQLite path or postgres:// URL)",
        discussion: """
            URL: a file path, sqlite:PATH, or postgres://user@host:port/db[?pool_size=N&statement_timeout=MS]
            Exit codes: 0 done or up to date, 1 storage error (schema newer than this binary, pending
            migrations with --check, a failed migration, an unreachable database), 2 usage.
            """,
        options: [Option(name: "--database", valueName: "URL", help: "the database", isRequired: true)],
        flags: [
            Flag(
                name: "--check",
                help: "do not migrate; exit 1 if migrations are pending or the schema is newer than this binary")
        ],
        action: { try await run($0) })

    static func run(_ parsed: CommandLineArguments) async throws -> Int32 {
        let applied = try await StoreLocation(try parsed.require("--database")).migrate(apply: !parsed.has("--check"))
        for identifier in applied { print("applied \(identifier)") }
        print(
            "schema up to date: \(Migration.all.count) migrations, latest \(Migration.all.last?.identifier ?? "none")")
        return 0
    }
}
