import AppStoreModels
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Migration `0037_webhook_queue_drain` on a database at the schema before it: the queues with
/// a pending delivery keep their schedule, the others are drained, and every queue keeps its
/// lease and fencing generation (SQLite rebuilds the table).
@Suite("Migration 0037: drained webhook queues")
struct WebhookQueueDrainMigrationTests {
    static let previous = Array(Migration.all.prefix { $0.identifier != "0037_webhook_queue_drain" })

    @Test("queues written at 0036 are drained when empty and keep their leases", arguments: Backend.enabled)
    func migratesQueues(backend: Backend) async throws {
        let database = try await TestDatabase.make(backend)
        defer { Task { await database.drop() } }
        let (t0, later) = (F.at(1), F.at(2))

        // 1. At 0036: ann has a pending delivery; bob's are delivered and dead-lettered; cy's is
        // delivered while an old worker's lease on the queue is still recorded.
        let connection = try PerAppKeysMigrationTests.connect(database)
        try Migrator.migrate(connection, migrations: Self.previous, apply: true)
        try connection.executeScript("BEGIN")
        let (ids, pending) = try { () throws -> ([Int64], Int64) in
            let tx = SQLStoreTransaction(connection: connection)
            try tx.saveApp(F.app, at: F.at(0))
            try tx.execute(
                """
                INSERT INTO webhook_endpoints (id, app_id, url, secret, enabled, created_at, updated_at)
                VALUES ('hook', $1, 'https://hook.example', 's', 1, $2, $2)
                """, .text(F.appId), SQLValue(F.at(0)))
            var ids: [Int64] = []
            var pending: Int64 = 0
            let queues: [(user: String, rows: [(delivered: Bool, dead: Bool)], due: Timestamp, owner: String?)] = [
                ("ann", [(true, false), (false, false)], t0, nil),
                ("bob", [(true, false), (false, true)], later, nil),
                ("cy", [(true, false)], t0, "worker-old"),
            ]
            for (index, queue) in queues.enumerated() {
                let customer = try tx.ensureCustomer(appId: F.appId, appUserId: queue.user, at: t0).id
                ids.append(customer)
                for (row, state) in queue.rows.enumerated() {
                    let event = try tx.appendEvents(
                        [WebhookEvents.event(id: "\(queue.user)-\(row)", appUserId: queue.user, at: t0)],
                        customerId: customer, at: t0)[0].sequence
                    if !state.delivered && !state.dead { pending = event }
                    try tx.execute(
                        """
                        INSERT INTO webhook_outbox (event_row_id, endpoint_id, customer_id, attempts, next_attempt_at,
                                                    delivered_at, dead_lettered_at, created_at)
                        VALUES ($1, 'hook', $2, 1, $3, $4, $5, $3)
                        """, .integer(event), .integer(customer), SQLValue(t0), state.delivered ? SQLValue(t0) : .null,
                        state.dead ? SQLValue(t0) : .null)
                }
                try tx.execute(
                    """
                    INSERT INTO webhook_queues (customer_id, endpoint_id, next_attempt_at, lease_owner,
                                                lease_expires_at, lease_generation)
                    VALUES ($1, 'hook', $2, $3, $4, $5)
                    """, .integer(customer), SQLValue(queue.due), SQLValue(queue.owner),
                    queue.owner == nil ? .null : SQLValue(t0.adding(milliseconds: 30_000)), .integer(Int64(index + 2)))
            }
            return (ids, pending)
        }()
        try connection.commit()
        connection.close()

        // 2. Open with this binary: 0037 runs.
        let store = try await database.open()
        defer { Task { await store.close() } }
        #expect(try await store.read { try $0.appliedMigrations() } == Migration.all.map(\.identifier))
        func queues() async throws -> [String] {
            try await store.read { reader in
                try reader.sql(
                    """
                    SELECT customer_id, next_attempt_at, lease_owner, lease_expires_at, lease_generation
                    FROM webhook_queues ORDER BY customer_id
                    """
                ).map { row in
                    try PerAppKeysMigrationTests.dump([row])[0].map { $0 ?? "-" }.joined(separator: " ")
                }
            }
        }
        let (ann, bob, cy) = (ids[0], ids[1], ids[2])
        let expires = t0.adding(milliseconds: 30_000).millisecondsSince1970
        #expect(
            try await queues() == [
                "\(ann) \(t0.millisecondsSince1970) - - 2", "\(bob) - - - 3", "\(cy) - worker-old \(expires) 4",
            ])

        // 3. Only ann's queue is due; a new event reopens bob's, whose claim goes on from its
        // generation.
        #expect(try await store.read { try $0.dueDeliveryEndpoints(now: later, limit: 10) } == ["hook"])
        let claimed = try await StoreConformanceTests.claim(store, "hook", "new", at: later)
        #expect(claimed.map(\.event.sequence) == [pending])
        #expect(claimed.map(\.lease.generation) == [3])
        let event = try await WebhookEvents.commit("bob-2", appUserId: "bob", appId: F.appId, into: store, at: later)
        let reopened = try await StoreConformanceTests.claim(store, "hook", "new", at: later)
        #expect(reopened.map(\.event.sequence) == [event.sequence])
        #expect(
            reopened.map(\.lease) == [
                DeliveryLease(
                    customerId: bob, endpointId: "hook", owner: "new", generation: 4,
                    expiresAt: later.adding(milliseconds: 60_000))
            ])
    }
}
