import Dispatch
import Foundation
import Storage
import Synchronization

/// `storekeeper migrate --database URL [--check]`: applies the pending schema migrations
/// (each in its own transaction, under a lock so concurrent migrators wait for each other)
/// and prints what it applied; `--check` only reports.
///
/// Exit codes: 0 done (or up to date), 1 storage error (schema newer than this binary,
/// pending migrations with `--check`, failed migration, unreachable database), 2 usage.
/// - Note: Blocks the calling thread (the CLI's main thread) while the store works.
enum MigrateCommand {
    static let usage = """
        usage: storekeeper migrate --database URL [--check]
          URL: a file path, sqlite:PATH, or postgres://user@host:port/db[?pool_size=N&statement_timeout=MS]
          --check   do not migrate; exit 1 if migrations are pending or the schema is newer than this binary
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var database: String?
        var checkOnly = false
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--database":
                guard index + 1 < arguments.count else {
                    return fail("missing URL after --database\n\n\(usage)", code: 2)
                }
                database = arguments[index + 1]
                index += 2
            case "--check":
                checkOnly = true
                index += 1
            case "--help", "-h":
                print(usage)
                return 0
            default:
                return fail("unknown option \(arguments[index])\n\n\(usage)", code: 2)
            }
        }
        guard let database else { return fail("missing --database\n\n\(usage)", code: 2) }

        let outcome = Mutex<Result<[String], any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<[String], any Error>
            do {
                result = .success(try await StoreLocation(database).migrate(apply: !checkOnly))
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        switch outcome.withLock({ $0 }) {
        case .success(let applied)?:
            for identifier in applied { print("applied \(identifier)") }
            print(
                "schema up to date: \(Migration.all.count) migrations, latest \(Migration.all.last?.identifier ?? "none")"
            )
            return 0
        case .failure(let error)?:
            return fail("storekeeper migrate: \(error)", code: 1)
        case nil:
            return fail("storekeeper migrate: no result", code: 1)
        }
    }

    static func fail(_ message: String, code: Int32) -> Int32 {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        return code
    }
}
