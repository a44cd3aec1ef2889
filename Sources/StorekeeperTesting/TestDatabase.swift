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
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "storekeeper-test-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let store = try await SQLiteStore.open(path: directory.appendingPathComponent("db.sqlite").path)
            return (store, { try? FileManager.default.removeItem(at: directory) })
        case .postgres(let url):
            return (try await PostgresStore.open(url: url), {})
        }
    }
}
