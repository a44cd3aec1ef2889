import Foundation
import Testing

@testable import Storage

/// Whole databases made and dropped for isolated runs: names are identifiers spliced into SQL,
/// so anything but a plain lowercase identifier is refused before it reaches the server.
@Suite struct PostgresDatabasesTests {
    @Test func onlyPlainIdentifiersAreAccepted() throws {
        for name in ["sk_run_0a", "_x", String(repeating: "a", count: 63)] {
            #expect(try PostgresDatabases.identifier(name) == name)
        }
        for name in [
            "", "1abc", "Abc", "a-b", "a b", "x; DROP DATABASE postgres", "é", String(repeating: "a", count: 64),
        ] {
            #expect(throws: StoreError.self, "\(name)") { try PostgresDatabases.identifier(name) }
        }
    }

    @Test(.enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage))
    func createdDatabaseIsEmptyUsableAndDropped() async throws {
        let server = try #require(Backend.postgresURL)
        let name = "sk_dbs_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let url = try PostgresDatabases.create(name, on: server)
        #expect(url.contains("/\(name)"))
        let store = try await PostgresStore.open(url: url)
        #expect(try await store.read { reader in try reader.apps() }.isEmpty)
        await store.close()
        try PostgresDatabases.drop(name, on: server)
        let remaining = try PostgresAdmin.query(server, "SELECT 1 FROM pg_database WHERE datname = $1", [.text(name)])
        #expect(remaining.isEmpty)
    }
}
