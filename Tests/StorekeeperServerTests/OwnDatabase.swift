import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

/// A database of the test's own that outlives a server (a restart): a SQLite file whose bytes
/// can be scanned, or a new PostgreSQL database on the test server, dropped afterwards.
struct OwnDatabase: Sendable {
    let engine: StoreEngine
    let url: String
    private let base: String?
    private let name: String

    static func make(_ engine: StoreEngine) async throws -> OwnDatabase {
        let name = "sk_own_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        switch engine {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return OwnDatabase(
                engine: engine, url: directory.appendingPathComponent("store.sqlite").path, base: nil, name: name)
        case .postgres:
            let base = try #require(TestDatabase.postgresURL)
            let url = try PostgresDatabases.create(name, on: base)
            return OwnDatabase(engine: engine, url: url, base: base, name: name)
        }
    }

    func open() async throws -> any Store {
        try await StoreLocation(url).open(migrate: true)
    }

    func drop() {
        switch engine {
        case .sqlite: try? FileManager.default.removeItem(atPath: (url as NSString).deletingLastPathComponent)
        case .postgres: if let base { try? PostgresDatabases.drop(name, on: base) }
        }
    }

    /// One statement on a PostgreSQL server, outside any store (creating and dropping databases,
    /// reading rows behind a running server's back).
    static func query(_ url: String, _ sql: String, _ arguments: [SQLValue] = []) throws -> [SQLRow] {
        let configuration = try PostgresConfiguration(url: url)
        let connection = try PostgresConnection(conninfo: configuration.conninfo, statementTimeoutMilliseconds: nil)
        defer { connection.close() }
        return try connection.query(sql, arguments)
    }
}
