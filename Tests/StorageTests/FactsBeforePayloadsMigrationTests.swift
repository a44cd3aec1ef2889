import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Migration `0025_facts_before_payloads` on a database created at the schema before it, with
/// fact rows of real sizes in it: every row survives as it was (ids included), SQLite's rows put
/// the signed payload last, and the facts read back as before.
@Suite("Migration 0025: facts before payloads")
struct FactsBeforePayloadsMigrationTests {
    static let identifier = "0025_facts_before_payloads"
    static let previous = Array(Migration.all.prefix { $0.identifier != identifier })

    /// The columns compared before and after, named (their order in the rows changes): the
    /// three fact tables' columns, as 0004's test lists them.
    static let tables = Array(PerAppKeysMigrationTests.tables.prefix(3))

    /// Incompressible text of `count` characters, as a JWS is: long enough to need overflow pages.
    static func payload(_ count: Int) -> String {
        String(Data((0..<(count * 3 / 4)).map { _ in UInt8.random(in: 0...255) }).base64EncodedString().prefix(count))
    }

    /// A notification's three rows with payloads of the sizes Apple's have.
    static func rows(_ source: IngestionWorkload.Notification) -> (NewNotification, NewTransaction, NewRenewalInfo) {
        (
            NewNotification(
                appId: F.appId, notificationUUID: source.uuid, type: source.type, subtype: nil,
                environment: .production, originalTransactionId: source.transaction.originalTransactionId,
                signedDate: source.transaction.signedDate, signedPayload: payload(11_600),
                fact: source.notificationFact, receivedAt: F.now),
            NewTransaction(
                appId: F.appId, jws: payload(3_400), fact: source.transaction, source: "notification",
                receivedAt: F.now),
            NewRenewalInfo(
                appId: F.appId, jws: payload(3_300), fact: source.renewal!, source: "notification", receivedAt: F.now)
        )
    }

    static func insert(_ rows: (NewNotification, NewTransaction, NewRenewalInfo), in tx: any StoreTransaction) throws
        -> [Int64]
    {
        guard case .inserted(let notification) = try tx.insertNotification(rows.0),
            case .inserted(let transaction) = try tx.insertTransaction(rows.1),
            case .inserted(let renewal) = try tx.insertRenewalInfo(rows.2)
        else { throw StoreError(.corruptValue, "a row of the test was a duplicate") }
        return [transaction, renewal, notification]
    }

    /// `insert` at the schema before 0025: the renewal info as that binary wrote it (today's
    /// conflict clause names the header digest, a column from 0031 on).
    static func insertBefore(_ rows: (NewNotification, NewTransaction, NewRenewalInfo), in tx: SQLStoreTransaction)
        throws -> [Int64]
    {
        guard case .inserted(let notification) = try tx.insertNotification(rows.0),
            case .inserted(let transaction) = try tx.insertTransaction(rows.1),
            let renewal = try tx.insertReturningId(
                """
                INSERT INTO signed_renewal_infos (app_id, environment, original_transaction_id, product_id, signed_date,
                                                  jws, source, fact_json, received_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                RETURNING id
                """, SQLStoreTransaction.columns(rows.2))
        else { throw StoreError(.corruptValue, "a row of the test was a duplicate") }
        return [transaction, renewal, notification]
    }

    @Test("rows written at 0024 survive 0025 unchanged; SQLite keeps payloads last", arguments: Backend.enabled)
    func migratesPopulatedDatabase(backend: Backend) async throws {
        let database = try await TestDatabase.make(backend)
        defer { Task { await database.drop() } }
        // The second customer's three periods (the first's third notification is a refund).
        let source = Array(F.notifications(customers: 2, perCustomer: 3).suffix(3))
        #expect(source.allSatisfy { $0.renewal != nil && $0.transaction.originalTransactionId == "n-o1" })

        // 1. The schema and rows as the binary before 0025 left them.
        let connection = try PerAppKeysMigrationTests.connect(database)
        try Migrator.migrate(connection, migrations: Self.previous, apply: true)
        try connection.executeScript("BEGIN")
        let before = try { () throws -> [[[String?]]] in
            let tx = SQLStoreTransaction(connection: connection)
            try tx.saveApp(F.app, at: F.at(0))
            try tx.saveCatalog(appId: F.appId, F.catalog, at: F.at(0))
            let ann = try tx.ensureCustomer(appId: F.appId, appUserId: "ann", at: F.now)
            _ = try tx.claimOriginalTransaction(
                source[0].transaction.originalTransactionId, customerId: ann.id, at: F.now)
            for notification in source.prefix(2) {
                let ids = try Self.insertBefore(Self.rows(notification), in: tx)
                try tx.finishNotification(id: ids[2], outcome: "applied", at: F.now)
            }
            return try Self.tables.map { table in
                try PerAppKeysMigrationTests.dump(try tx.rows("SELECT \(table.columns) FROM \(table.name) ORDER BY id"))
            }
        }()
        try connection.commit()
        connection.close()
        #expect(before.map(\.count) == [2, 2, 2])
        #expect(before[2].map { $0[12] } == ["applied", "applied"])

        // 2. Open with this binary: 0025 runs.
        let store = try await database.open()
        #expect(try await store.read { try $0.appliedMigrations() } == Migration.all.map(\.identifier))
        let customerId = try await store.read { try #require(try $0.customer(appId: F.appId, .appUserId("ann"))).id }
        let (after, facts) = try await store.read { reader in
            (
                try Self.tables.map { table in
                    try PerAppKeysMigrationTests.dump(
                        try reader.sql("SELECT \(table.columns) FROM \(table.name) ORDER BY id"))
                },
                try reader.facts(customerId: customerId)
            )
        }
        #expect(after == before)
        let expected: [Fact] =
            source.prefix(2).map { .transaction($0.transaction) } + source.prefix(2).map { .renewalInfo($0.renewal!) }
            + source.prefix(2).map { .notification($0.notificationFact) }
        #expect(facts == expected)

        if backend == .sqlite, let sqlite = store as? SQLiteStore {
            let (columns, indexes) = try await store.read { reader in
                (
                    try Self.tables.map { table in
                        try reader.sql("SELECT name FROM pragma_table_info('\(table.name)') ORDER BY cid").map {
                            try $0.text(0)
                        }
                    },
                    Set(try reader.sql("SELECT name FROM sqlite_master WHERE type = 'index'").map { try $0.text(0) })
                )
            }
            #expect(
                columns == [
                    // 0029, 0030 and 0031 append the header's digest after the payload: it is read
                    // only with the payload, so no read of the facts goes through its pages.
                    [
                        "id", "app_id", "environment", "transaction_id", "original_transaction_id", "product_id",
                        "signed_date", "source", "received_at", "fact_json", "jws", "jws_header_digest",
                    ],
                    [
                        "id", "app_id", "environment", "original_transaction_id", "product_id", "signed_date",
                        "source", "received_at", "fact_json", "jws", "jws_header_digest",
                    ],
                    [
                        "id", "app_id", "notification_uuid", "notification_type", "subtype", "environment",
                        "original_transaction_id", "signed_date", "received_at", "processed_at", "outcome",
                        "fact_json", "signed_payload", "signed_payload_header_digest",
                    ],
                ])
            #expect(
                indexes.isSuperset(of: [
                    "signed_transactions_original", "signed_renewal_infos_original", "notifications_original",
                    "sqlite_autoindex_signed_transactions_1", "sqlite_autoindex_signed_renewal_infos_1",
                    "sqlite_autoindex_notifications_1",
                ]))
            #expect(try await sqlite.integrityCheck() == "ok")
            #expect(try await store.read { try $0.sql("PRAGMA foreign_key_check").count } == 0)
        }

        // 3. New rows follow the copied ones, and a replay is still a duplicate.
        let third = Self.rows(source[2])
        let (ids, replay) = try await store.write { tx in
            (try Self.insert(third, in: tx), try tx.insertNotification(Self.rows(source[0]).0).isDuplicate)
        }
        let lastIds = try before.map { table in try #require(table.last?.first.flatMap { $0.flatMap { Int64($0) } }) }
        #expect(zip(ids, lastIds).allSatisfy { $0 > $1 }, "ids continue after the rebuilt tables' rows")
        #expect(replay)
        let stored = try await store.read { reader in
            try reader.sql("SELECT signed_payload FROM notifications WHERE id = $1", .integer(ids[2])).map {
                try $0.text(0)
            }
        }
        #expect(stored == [third.0.signedPayload])
        await store.close()
    }
}
