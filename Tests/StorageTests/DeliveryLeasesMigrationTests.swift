import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Migration `0006_delivery_leases` on a database created at the schema before it, with outbox
/// rows in every state: the rows keep what they were (old row leases cleared), each gets its
/// customer, and each customer with pending deliveries gets a queue due when its head was.
@Suite("Migration 0006: delivery leases")
struct DeliveryLeasesMigrationTests {
    static let identifier = "0006_delivery_leases"
    static let previous = Array(Migration.all.prefix { $0.identifier != identifier })
    static let columns =
        "id, event_row_id, endpoint_id, attempts, next_attempt_at, last_error, delivered_at, dead_lettered_at, created_at"

    @Test("outbox rows written at 0005 survive 0006 and are claimed by queue", arguments: Backend.enabled)
    func migratesPopulatedOutbox(backend: Backend) async throws {
        let database = try await TestDatabase.make(backend)
        defer { Task { await database.drop() } }
        let t0 = F.at(1)
        let later = t0.adding(milliseconds: 60_000)

        // 1. The schema and rows as a binary before 0006 left them.
        let connection = try PerAppKeysMigrationTests.connect(database)
        try Migrator.migrate(connection, migrations: Self.previous, apply: true)
        try connection.executeScript("BEGIN")
        let (before, customers, events) = try { () throws -> ([[String?]], [Int64], [Int64]) in
            let tx = SQLStoreTransaction(connection: connection)
            // As the statements of that time wrote them: today's saves also count `version` (0007).
            let app = F.app
            try tx.execute(
                """
                INSERT INTO apps (id, bundle_id, app_apple_id, environments, shared_secret, settings_json,
                                  created_at, updated_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
                """,
                .text(app.id), .text(app.bundleId), SQLValue(app.appAppleId),
                .text(app.environments.map(\.rawValue).joined(separator: ",")), SQLValue(app.sharedSecret),
                SQLStoreTransaction.json(app.settings), SQLValue(F.at(0)))
            try tx.execute(
                """
                INSERT INTO webhook_endpoints (id, app_id, url, secret, enabled, created_at, updated_at)
                VALUES ('hook', $1, 'https://hook.example', 's', 1, $2, $2)
                """, .text(F.appId), SQLValue(F.at(0)))
            var customers: [Int64] = []
            var events: [Int64] = []
            for (customer, count) in [("ann", 3), ("bob", 2)] {
                let record = try tx.ensureCustomer(appId: F.appId, appUserId: customer, at: t0)
                customers.append(record.id)
                // As the binary before 0008 wrote them (no `retracted_at` yet).
                for index in 0..<count {
                    let event = WebhookEvents.event(id: "\(customer)-\(index)", appUserId: customer, at: t0)
                    events.append(
                        try tx.rows(
                            """
                            INSERT INTO lifecycle_events (customer_id, event_id, environment, type, occurred_at,
                                                          event_json, created_at)
                            VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id
                            """, .integer(record.id), .text(event.id), .text(event.environment.rawValue),
                            .text(event.type.rawValue), SQLValue(event.occurredAt), SQLStoreTransaction.json(event),
                            SQLValue(t0)
                        )[0].integer(0))
                }
            }
            // ann: head failed (retry later), then one pending, then one delivered;
            // bob: head leased by an old worker, then one dead-lettered.
            let rows:
                [(
                    event: Int64, attempts: Int64, next: Timestamp, owner: String?, expires: Timestamp?,
                    error: String?, delivered: Timestamp?, dead: Timestamp?
                )] = [
                    (events[0], 1, later, nil, nil, "http_status_500", nil, nil),
                    (events[1], 0, t0, nil, nil, nil, nil, nil),
                    (events[2], 1, t0, nil, nil, nil, t0, nil),
                    (events[3], 1, t0, "worker-old", t0.adding(milliseconds: 30_000), nil, nil, nil),
                    (events[4], 3, t0, nil, nil, "timeout", nil, t0),
                ]
            for row in rows {
                try tx.execute(
                    """
                    INSERT INTO webhook_outbox (event_row_id, endpoint_id, attempts, next_attempt_at, lease_owner,
                                                lease_expires_at, last_error, delivered_at, dead_lettered_at,
                                                created_at)
                    VALUES ($1, 'hook', $2, $3, $4, $5, $6, $7, $8, $9)
                    """, .integer(row.event), .integer(row.attempts), SQLValue(row.next), SQLValue(row.owner),
                    SQLValue(row.expires), SQLValue(row.error), SQLValue(row.delivered), SQLValue(row.dead),
                    SQLValue(t0))
            }
            let before = try PerAppKeysMigrationTests.dump(
                try tx.rows("SELECT \(Self.columns) FROM webhook_outbox ORDER BY id"))
            return (before.map { $0.map { $0 ?? "-" }.joined(separator: ",") }.map { [$0] }, customers, events)
        }()
        try connection.commit()
        connection.close()

        // 2. Open with this binary: 0006 runs.
        let store = try await database.open()
        defer { Task { await store.close() } }
        #expect(try await store.read { try $0.appliedMigrations() } == Migration.all.map(\.identifier))
        let (after, owners, queues) = try await store.read { reader in
            (
                try PerAppKeysMigrationTests.dump(
                    try reader.sql("SELECT \(Self.columns) FROM webhook_outbox ORDER BY id")
                ).map { [$0.map { $0 ?? "-" }.joined(separator: ",")] },
                try reader.sql("SELECT customer_id, lease_owner FROM webhook_outbox ORDER BY id").map {
                    "\(try $0.integer(0)) \(try $0.optionalText(1) ?? "-")"
                },
                try reader.sql(
                    """
                    SELECT customer_id, endpoint_id, next_attempt_at, lease_owner, lease_generation
                    FROM webhook_queues ORDER BY customer_id
                    """
                ).map {
                    "\(try $0.integer(0)) \(try $0.text(1)) \(try $0.integer(2)) \(try $0.optionalText(3) ?? "-") \(try $0.integer(4))"
                }
            )
        }
        #expect(after == before)
        let (ann, bob) = (customers[0], customers[1])
        #expect(owners == ["\(ann) -", "\(ann) -", "\(ann) -", "\(bob) -", "\(bob) -"])
        #expect(
            queues == [
                "\(ann) hook \(later.millisecondsSince1970) - 0", "\(bob) hook \(t0.millisecondsSince1970) - 0",
            ])

        // 3. Claimed by queue: bob's head at once; ann's whole queue only at its head's retry.
        func claim(at now: Timestamp) async throws -> [Int64] {
            try await store.write { tx in
                try tx.claimDeliveries(
                    endpointId: "hook", owner: "new", now: now, leaseMilliseconds: 120_000, queues: 10, batchSize: 10,
                    maxAttempts: 100)
            }.map(\.event.sequence)
        }
        #expect(try await claim(at: t0) == [events[3]])
        #expect(try await claim(at: later) == [events[0], events[1]])
    }
}
