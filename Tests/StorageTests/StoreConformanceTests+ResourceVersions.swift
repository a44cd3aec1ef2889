import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Synchronization
import Testing

@testable import Storage

private typealias F = IngestionWorkload

/// Versions of apps, catalogs and webhook endpoints (migration `0007_resource_versions`): 1 when
/// created, one more per save; creating an id that exists changes nothing; a locked row holds
/// off another writer's lock until commit, which then reads what the first one committed.
extension StoreConformanceTests {
    @Test("saves count versions; an insert of an existing id changes nothing", arguments: Backend.enabled)
    func resourceVersionsCount(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let endpoint = WebhookEndpoint(id: "e1", appId: F.appId, url: "https://example.com/a", secret: "s1")
            let counted = try await store.write { tx -> [Int64?] in
                #expect(try tx.insertApp(F.app, at: F.at(0)))
                var other = F.app
                other.bundleId = "com.example.other"
                #expect(try tx.insertApp(other, at: F.at(1)) == false)
                let created = try tx.app(id: F.appId)?.version
                let bundleAfterInsert = try tx.app(id: F.appId)?.bundleId
                #expect(bundleAfterInsert == "com.example.app")
                let saved = try tx.saveApp(F.app, at: F.at(2))
                let locked = try tx.lockApp(id: F.appId)?.version
                let missing = try tx.lockApp(id: "no-such-app")?.version

                let noCatalog = try tx.storedCatalog(appId: F.appId)?.version
                let firstCatalog = try tx.saveCatalog(appId: F.appId, F.catalog, at: F.at(3))
                let secondCatalog = try tx.saveCatalog(appId: F.appId, ProductCatalog(products: []), at: F.at(4))
                let storedCatalog = try tx.storedCatalog(appId: F.appId)

                #expect(try tx.insertWebhookEndpoint(endpoint, at: F.at(5)))
                var moved = endpoint
                moved.url = "https://example.com/b"
                #expect(try tx.insertWebhookEndpoint(moved, at: F.at(6)) == false)
                let endpointAfterInsert = try tx.lockWebhookEndpoint(id: "e1", appId: F.appId)
                let savedEndpoint = try tx.saveWebhookEndpoint(moved, at: F.at(7))
                let listed = try tx.webhookEndpoints(appId: F.appId).map(\.version)
                let otherApp = try tx.lockWebhookEndpoint(id: "e1", appId: "another-app")
                return [
                    created, saved, locked, missing, noCatalog, firstCatalog, secondCatalog, storedCatalog?.version,
                    endpointAfterInsert?.version, savedEndpoint, listed.first, otherApp?.version,
                    storedCatalog?.catalog.products.count == 0 ? 0 : -1,
                    endpointAfterInsert?.url == "https://example.com/a" ? 0 : -1,
                ]
            }
            #expect(counted == [1, 2, 2, nil, nil, 1, 2, 2, 1, 2, 2, nil, 0, 0])
            let read = try await store.read { reader in (try reader.app(id: F.appId), try reader.apps()) }
            #expect(read.0?.version == 2)
            #expect(read.1.map(\.version) == [2])
        }
    }

    @Test(
        "a locked app holds off another lock until commit, which then reads the committed row",
        arguments: Backend.enabled)
    func lockedAppSerializesWriters(backend: Backend) async throws {
        try await withStore(backend) { store, database in
            try await F.setUp(store)
            // A second store on the same database, as a second instance has.
            let other = try await database.open()
            let locked = Mutex(false)
            let holder = Task {
                try await store.write { tx in
                    var app = try #require(try tx.lockApp(id: F.appId))
                    locked.withLock { $0 = true }
                    // Holds the lock while the other writer asks for it (a blocking store thread).
                    Thread.sleep(forTimeInterval: 0.3)
                    app.bundleId = "com.example.changed"
                    try tx.saveApp(app, at: F.at(1))
                }
            }
            while !locked.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
            let seen = try await other.write { tx in try tx.lockApp(id: F.appId) }
            try await holder.value
            await other.close()
            #expect(seen?.version == 2)
            #expect(seen?.bundleId == "com.example.changed")
        }
    }

    @Test("0007 keeps existing apps, catalogs and endpoints, each at version 1", arguments: Backend.enabled)
    func resourceVersionsMigration(backend: Backend) async throws {
        let database = try await TestDatabase.make(backend)
        defer { Task { await database.drop() } }
        let connection = try PerAppKeysMigrationTests.connect(database)
        try Migrator.migrate(
            connection, migrations: Array(Migration.all.prefix { $0.identifier != "0007_resource_versions" }),
            apply: true)
        try connection.executeScript("BEGIN")
        _ = try connection.execute(
            """
            INSERT INTO apps (id, bundle_id, environments, settings_json, created_at, updated_at)
            VALUES ('app-1', 'com.example.app', 'Sandbox', '{}', 1, 2)
            """, [])
        _ = try connection.execute(
            "INSERT INTO product_catalogs (app_id, catalog_json, updated_at) VALUES ('app-1', $1, 3)",
            [.text(SQLStoreTransaction.jsonText(F.catalog))])
        _ = try connection.execute(
            """
            INSERT INTO webhook_endpoints (id, app_id, url, secret, enabled, created_at, updated_at)
            VALUES ('e1', 'app-1', 'https://example.com/hook', 's', 1, 4, 4)
            """, [])
        try connection.commit()
        connection.close()

        let store = try await database.open()
        let read = try await store.read { reader in
            (
                try reader.app(id: "app-1"), try reader.storedCatalog(appId: "app-1")?.version,
                try reader.webhookEndpoints(appId: "app-1")
            )
        }
        await store.close()
        #expect(read.0?.version == 1)
        #expect(read.0?.bundleId == "com.example.app")
        #expect(read.1 == 1)
        #expect(read.2.map(\.version) == [1])
        #expect(read.2.map(\.url) == ["https://example.com/hook"])
    }
}
