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
            // The name is ours (a UUID), never input: identifiers cannot be bound parameters.
            _ = try Self.query(base, "CREATE DATABASE \(name)")
            var components = try #require(URLComponents(string: base))
            components.path = "/" + name
            return OwnDatabase(engine: engine, url: try #require(components.string), base: base, name: name)
        }
    }

    func open() async throws -> any Store {
        try await StoreLocation(url).open(migrate: true)
    }

    func drop() {
        switch engine {
        case .sqlite: try? FileManager.default.removeItem(atPath: (url as NSString).deletingLastPathComponent)
        case .postgres: if let base { _ = try? Self.query(base, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
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
