import Foundation
import Storage

/// Which database a test stores into: a fresh SQLite file, or the PostgreSQL database
/// `STOREKEEPER_TEST_POSTGRES_URL` names (shared by runs, so every run uses its own app and
/// transaction ids). `make test` starts that PostgreSQL.
public enum TestDatabase: Sendable, CustomStringConvertible {
    case sqlite
    case postgres(String)

    public static let postgresURL = ProcessInfo.processInfo.environment["STOREKEEPER_TEST_POSTGRES_URL"]
    public static let postgresSkip = "STOREKEEPER_TEST_POSTGRES_URL is not set: PostgreSQL runs skipped"

    public var description: String {
        switch self {
        case .sqlite: "sqlite"
        case .postgres: "postgres"
        }
    }

    /// Opens (and migrates) the store; `cleanup` removes what the run created on disk.
    public func open() async throws -> (store: any Store, cleanup: @Sendable () -> Void) {
        switch self {
        case .sqlite:
            let directory = try ScratchDirectories.make(prefix: "storekeeper-test")
            let store = try await SQLiteStore.open(path: directory.appendingPathComponent("db.sqlite").path)
            return (store, { try? FileManager.default.removeItem(at: directory) })
        case .postgres(let url):
            return (try await PostgresStore.open(url: url), {})
        }
    }

    /// A new, empty PostgreSQL database of the caller's own on the test server, for runs whose
    /// cost or result must not depend on what earlier tests left in the shared one (workers
    /// visit every app in the store). `drop` removes it.
    public static func ownPostgres() throws -> (database: TestDatabase, drop: @Sendable () -> Void) {
        guard let server = postgresURL else { throw StoreError(.invalidConfiguration, postgresSkip) }
        let name = "sk_run_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let url = try PostgresDatabases.create(name, on: server)
        return (.postgres(url), { try? PostgresDatabases.drop(name, on: server) })
    }
}
