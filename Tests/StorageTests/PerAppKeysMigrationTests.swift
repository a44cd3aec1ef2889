import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Migration `0004_per_app_keys` on a database created at the schema before it, with rows in
/// it: every row survives as it was (ids included), queued consumption jobs take their app,
/// and afterwards the keys are per app.
@Suite("Migration 0004: per-app keys")
struct PerAppKeysMigrationTests {
    static let identifier = "0004_per_app_keys"
    /// The migrations before 0004, as a binary of that time applied them.
    static let previous = Array(Migration.all.prefix { $0.identifier != identifier })
    static let twin = TenantIsolationTests.twin

    /// The columns compared before and after, per table (`jobs` without the new `app_id`).
    static let tables: [(name: String, columns: String)] = [
        (
            "signed_transactions",
            "id, app_id, environment, transaction_id, original_transaction_id, product_id, signed_date, jws, source, "
                + "fact_json, received_at"
        ),
        (
            "signed_renewal_infos",
            "id, app_id, environment, original_transaction_id, product_id, signed_date, jws, source, fact_json, "
                + "received_at"
        ),
        (
            "notifications",
            "id, app_id, notification_uuid, notification_type, subtype, environment, original_transaction_id, "
                + "signed_date, signed_payload, fact_json, received_at, processed_at, outcome"
        ),
        (
            "jobs",
            "id, kind, payload, dedupe_key, run_at, attempts, lease_owner, lease_expires_at, last_error, "
                + "completed_at, failed_at, created_at"
        ),
    ]

    /// A direct connection to the test database, outside any store.
    static func connect(_ database: TestDatabase) throws -> any SQLConnection {
        switch try StoreLocation(database.url) {
        case .sqlite(let path):
            return try SQLiteConnection(path: path, readOnly: false, busyTimeoutMilliseconds: 5_000)
        case .postgres(let configuration):
            return try PostgresConnection(conninfo: configuration.conninfo, statementTimeoutMilliseconds: nil)
        }
    }

    static func dump(_ rows: [SQLRow]) throws -> [[String?]] {
        try rows.map { row in try row.values.indices.map { try row.optionalText($0) } }
    }

    @Test("rows written at 0003 survive 0004 unchanged and the keys become per app", arguments: Backend.enabled)
    func migratesPopulatedDatabase(backend: Backend) async throws {
        let database = try await TestDatabase.make(backend)
        defer { Task { await database.drop() } }
        let source = F.notifications(customers: 1, perCustomer: 2)
        let original = source[0].transaction.originalTransactionId

        // 1. The schema and rows as a binary before 0004 left them.
        let connection = try Self.connect(database)
        try Migrator.migrate(connection, migrations: Self.previous, apply: true)
        try connection.executeScript("BEGIN")
        let (before, droppedForTwin) = try { () throws -> ([[[String?]]], Int) in
            let tx = SQLStoreTransaction(connection: connection)
            // As the statements of that time wrote them: today's saves also count `version` (0007).
            for app in [F.app, Self.twin] {
                try tx.execute(
                    """
                    INSERT INTO apps (id, bundle_id, app_apple_id, environments, shared_secret, settings_json,
                                      created_at, updated_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
                    """,
                    .text(app.id), .text(app.bundleId), SQLValue(app.appAppleId),
                    .text(app.environments.map(\.rawValue).joined(separator: ",")), SQLValue(app.sharedSecret),
                    SQLStoreTransaction.json(app.settings), SQLValue(F.at(0)))
            }
            try tx.execute(
                "INSERT INTO product_catalogs (app_id, catalog_json, updated_at) VALUES ($1, $2, $3)",
                .text(F.appId), SQLStoreTransaction.json(F.catalog), SQLValue(F.at(0)))
            let ann = try tx.ensureCustomer(appId: F.appId, appUserId: "ann", at: F.now)
            _ = try tx.claimOriginalTransaction(original, customerId: ann.id, at: F.now)
            for notification in source {
                try Self.insertAtPreviousSchema(notification, appId: F.appId, tx)
            }
            try tx.execute(
                """
                INSERT INTO notifications (app_id, notification_uuid, notification_type, signed_date, signed_payload,
                                           received_at)
                VALUES ($1, 'test-notification', 'TEST', $2, 'eyJ.test.sig', $2)
                """, .text(F.appId), SQLValue(F.now))
            for (kind, payload, dedupeKey) in [
                (
                    "consumption_request", #"{"appId":"app-1","notificationUUID":"n-c0-p0"}"#,
                    "consumption_request:n-c0-p0"
                ),
                ("consumption_request", #"{"appId":"gone","notificationUUID":"x"}"#, "consumption_request:x"),
                ("rollup", "{}", "rollup:1"),
                ("rollup", "{}", nil),
            ] {
                try tx.execute(
                    """
                    INSERT INTO jobs (kind, payload, dedupe_key, run_at, attempts, created_at)
                    VALUES ($1, $2, $3, $4, 0, $4)
                    ON CONFLICT (dedupe_key) DO NOTHING
                    """, .text(kind), .text(payload), SQLValue(dedupeKey), SQLValue(F.now))
            }
            // The defect as it was: the twin's copy of the same transaction changed nothing.
            let dropped = try connection.execute(
                """
                INSERT INTO signed_transactions (app_id, environment, transaction_id, original_transaction_id,
                                                 product_id, signed_date, jws, source, fact_json, received_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                ON CONFLICT (environment, transaction_id, signed_date) DO NOTHING
                """,
                SQLStoreTransaction.columns(
                    NewTransaction(
                        appId: Self.twin.id, jws: "twin", fact: source[0].transaction, source: "api",
                        receivedAt: F.now)))
            let before = try Self.tables.map { table in
                try Self.dump(try tx.rows("SELECT \(table.columns) FROM \(table.name) ORDER BY id"))
            }
            return (before, dropped)
        }()
        try connection.commit()
        connection.close()
        #expect(droppedForTwin == 0)
        #expect(before.map(\.count) == [2, 2, 3, 4])

        // 2. Open with this binary: 0004 runs.
        let store = try await database.open()
        #expect(try await store.read { try $0.appliedMigrations() } == Migration.all.map(\.identifier))
        let (after, jobApps, indexes, facts) = try await store.read { reader in
            (
                try Self.tables.map { table in
                    try Self.dump(try reader.sql("SELECT \(table.columns) FROM \(table.name) ORDER BY id"))
                },
                try reader.sql("SELECT app_id FROM jobs ORDER BY id").map { try $0.optionalText(0) },
                Set(
                    try reader.sql(
                        backend == .sqlite
                            ? "SELECT name FROM sqlite_master WHERE type = 'index'"
                            : "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
                    ).map { try $0.text(0) }),
                try reader.facts(
                    customerId: try #require(try reader.customer(appId: F.appId, .appUserId("ann"))).id)
            )
        }
        #expect(after == before)
        #expect(jobApps == [F.appId, nil, nil, nil])
        #expect(
            indexes.isSuperset(of: [
                "signed_transactions_original", "signed_renewal_infos_original", "notifications_original", "jobs_due",
                "jobs_app_dedupe", "jobs_global_dedupe",
            ]))
        #expect(
            facts
                == source.map { .transaction($0.transaction) } + source.map { .renewalInfo($0.renewal!) }
                + source.map { .notification($0.notificationFact) })
        if let sqlite = store as? SQLiteStore {
            #expect(try await sqlite.integrityCheck() == "ok")
            #expect(try await store.read { try $0.sql("PRAGMA foreign_key_check").count } == 0)
        }

        // 3. The keys are per app now: the twin's copies are new, the first app's are replays.
        let lastTransactionId = try #require(before[0].last?.first?.flatMap { Int64($0) })
        let results = try await store.write { tx in
            let mine = Rows(source[0], appId: F.appId)
            let twins = Rows(source[0], appId: Self.twin.id)
            return (
                try mine.insert(in: tx), try twins.insert(in: tx),
                try tx.insertTransaction(Rows(source[1], appId: Self.twin.id).transaction),
                [
                    try tx.enqueueJob(
                        appId: F.appId, kind: "consumption_request", payload: "{}", runAt: F.now,
                        dedupeKey: "consumption_request:n-c0-p0", at: F.now),
                    try tx.enqueueJob(
                        appId: Self.twin.id, kind: "consumption_request", payload: "{}", runAt: F.now,
                        dedupeKey: "consumption_request:n-c0-p0", at: F.now),
                    try tx.enqueueJob(
                        appId: nil, kind: "rollup", payload: "{}", runAt: F.now, dedupeKey: "rollup:1", at: F.now),
                ].map { $0 != nil }
            )
        }
        #expect(results.0 == [false, false, false])
        #expect(results.1 == [true, true, true])
        guard case .inserted(let newId) = results.2 else {
            Issue.record("the twin's second transaction was not stored")
            await store.close()
            return
        }
        #expect(newId > lastTransactionId, "ids continue after the rebuilt table's rows")
        #expect(results.3 == [false, true, false])
        await store.close()
    }

    /// What `IngestionWorkload.ingest` stored for `notification` before 0004, with that time's
    /// conflict targets.
    static func insertAtPreviousSchema(
        _ notification: IngestionWorkload.Notification, appId: String, _ tx: SQLStoreTransaction
    ) throws {
        let rows = Rows(notification, appId: appId)
        try tx.execute(
            """
            INSERT INTO notifications (app_id, notification_uuid, notification_type, subtype, environment,
                                       original_transaction_id, signed_date, signed_payload, fact_json, received_at,
                                       processed_at, outcome)
            VALUES ($1, $2, $3, NULL, 'Production', $4, $5, $6, $7, $8, $8, 'processed')
            ON CONFLICT (notification_uuid) DO NOTHING
            """, .text(appId), .text(notification.uuid), .text(notification.type),
            .text(notification.transaction.originalTransactionId), SQLValue(notification.transaction.signedDate),
            .text(notification.signedPayload), SQLStoreTransaction.json(notification.notificationFact),
            SQLValue(F.now))
        try tx.connection.execute(
            """
            INSERT INTO signed_transactions (app_id, environment, transaction_id, original_transaction_id,
                                             product_id, signed_date, jws, source, fact_json, received_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            ON CONFLICT (environment, transaction_id, signed_date) DO NOTHING
            """, SQLStoreTransaction.columns(rows.transaction))
        try tx.connection.execute(
            """
            INSERT INTO signed_renewal_infos (app_id, environment, original_transaction_id, product_id, signed_date,
                                              jws, source, fact_json, received_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (environment, original_transaction_id, signed_date) DO NOTHING
            """, SQLStoreTransaction.columns(rows.renewal))
    }
}

private typealias Rows = TenantIsolationTests.Rows
