import AppStoreModels
import Foundation
import Testing

@testable import Storage

/// The engines the conformance suite runs against. PostgreSQL joins when
/// `STOREKEEPER_TEST_POSTGRES_URL` names a server (`scripts/postgres-test.sh start` prints one).
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    static let postgresURL: String? = {
        let value = ProcessInfo.processInfo.environment["STOREKEEPER_TEST_POSTGRES_URL"]
        return value?.isEmpty == false ? value : nil
    }()

    static let postgresSkipMessage: Comment =
        "PostgreSQL cases skipped: STOREKEEPER_TEST_POSTGRES_URL is unset (export STOREKEEPER_TEST_POSTGRES_URL=$(scripts/postgres-test.sh start))"

    /// SQLite always; PostgreSQL when configured (otherwise the skip is announced once).
    static let enabled: [Backend] = {
        if postgresURL == nil {
            FileHandle.standardError.write(Data("note: \(postgresSkipMessage)\n".utf8))
            return [.sqlite]
        }
        return [.sqlite, .postgres]
    }()
}

/// A fresh, empty database for one test: a temp SQLite file, or a new PostgreSQL database
/// created on the test server and dropped afterwards.
struct TestDatabase: Sendable {
    let backend: Backend
    /// What `StoreLocation` / `storekeeper migrate --database` accept.
    let url: String
    private let cleanup: @Sendable () async -> Void

    static func make(_ backend: Backend, options: String = "") async throws -> TestDatabase {
        let name = "sk_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        switch backend {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return TestDatabase(
                backend: backend, url: directory.appendingPathComponent("store.db").path,
                cleanup: { try? FileManager.default.removeItem(at: directory) })
        case .postgres:
            let base = try #require(Backend.postgresURL, Backend.postgresSkipMessage)
            // The name is ours (a UUID), never input: identifiers cannot be bound parameters.
            try PostgresAdmin.execute(base, "CREATE DATABASE \(name)")
            var components = try #require(URLComponents(string: base))
            components.path = "/" + name
            var items = components.queryItems ?? []
            for option in options.split(separator: "&") where !option.isEmpty {
                let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
                items.append(URLQueryItem(name: parts[0], value: parts.count > 1 ? parts[1] : ""))
            }
            components.queryItems = items.isEmpty ? nil : items
            let url = try #require(components.string)
            return TestDatabase(
                backend: backend, url: url,
                cleanup: { try? PostgresAdmin.execute(base, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") })
        }
    }

    func open(migrate: Bool = true) async throws -> any Store {
        try await StoreLocation(url).open(migrate: migrate)
    }

    func drop() async { await cleanup() }
}

/// Runs `body` with a migrated store on a fresh database, then closes and drops it.
func withStore(
    _ backend: Backend, options: String = "", _ body: (any Store, TestDatabase) async throws -> Void
) async throws {
    let database = try await TestDatabase.make(backend, options: options)
    let store: any Store
    do {
        store = try await database.open()
    } catch {
        await database.drop()
        throw error
    }
    do {
        try await body(store, database)
    } catch {
        await store.close()
        await database.drop()
        throw error
    }
    await store.close()
    await database.drop()
}

/// Statements the store itself never runs (databases, terminating backends), on a direct
/// libpq connection.
enum PostgresAdmin {
    static func execute(_ url: String, _ sql: String, _ arguments: [SQLValue] = []) throws {
        _ = try query(url, sql, arguments)
    }

    static func query(_ url: String, _ sql: String, _ arguments: [SQLValue] = []) throws -> [SQLRow] {
        let configuration = try PostgresConfiguration(url: url)
        let connection = try PostgresConnection(conninfo: configuration.conninfo, statementTimeoutMilliseconds: nil)
        defer { connection.close() }
        return try connection.query(sql, arguments)
    }
}

/// Raw SQL inside a store transaction, for tests that must reach past the contract
/// (planting a migration from the future, counting rows).
extension StoreReader {
    func sql(_ text: String, _ arguments: SQLValue...) throws -> [SQLRow] {
        try (self as! SQLStoreTransaction).connection.query(text, arguments)
    }

    /// How the engine would run `text` with `arguments`, a line per step: SQLite's `EXPLAIN
    /// QUERY PLAN` details, PostgreSQL's `EXPLAIN (COSTS OFF)` lines.
    func queryPlan(_ text: String, _ arguments: [SQLValue]) throws -> String {
        let connection = (self as! SQLStoreTransaction).connection
        switch connection.dialect {
        case .sqlite:
            return try connection.query("EXPLAIN QUERY PLAN " + text, arguments).map { row throws(StoreError) in
                try row.text(3)
            }.joined(separator: "\n")
        case .postgres:
            return try connection.query("EXPLAIN (COSTS OFF) " + text, arguments).map { row throws(StoreError) in
                try row.text(0)
            }.joined(separator: "\n")
        }
    }

    func count(_ table: String) throws -> Int64 {
        try sql("SELECT COUNT(*) FROM \(table)")[0].integer(0)
    }
}
