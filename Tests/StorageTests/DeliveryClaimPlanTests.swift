import AppStoreModels
import StorekeeperTesting
import Testing

@testable import Storage

/// The delivery worker's reads walk only the queues and rows with work, in their order, whatever
/// the outbox holds besides. Queues are never removed and delivered rows are kept, so before
/// migrations 0035, 0037 and 0038 each round, claim and page paid for an app's whole history:
/// with 100,000 customers and one dead endpoint, SQLite took 109 ms a round to find the due
/// endpoints (once a second), 86 ms to claim the dead endpoint's queues once its backoff ended
/// and 12 ms to sweep expired leases (both in the write transaction), and 25 ms for a page of
/// failed deliveries. SQLite's plans, made without statistics, depend on the schema alone;
/// PostgreSQL's are checked on analyzed tables, for no sort and no whole-table read of the
/// queues or the outbox.
@Suite struct DeliveryClaimPlanTests {
    typealias F = IngestionFixture
    static let customers = 3_000
    /// Customers whose queue to `live` has a delivery due, one a millisecond from `dueFrom`.
    static let dueCustomers = 30
    static let dueFrom = F.at(1)
    /// When the dead endpoint's queues are due again.
    static let deadRetry = F.at(10)

    /// Per customer, in the app: an event delivered to `live` (its queue drained; every seventh
    /// dead-lettered there instead) and failing at `dead` (its queue backing off until
    /// `deadRetry`; every hundredth dead-lettered, its queue then drained); the first
    /// `dueCustomers` also a second event, pending at `live`. The
    /// other app has the same at its endpoint `other`, all failing: rows a page of the app must
    /// not walk.
    static func seed(_ store: any Store) async throws {
        try await F.setUp(
            store,
            endpoints: [
                WebhookEndpoint(id: "live", appId: F.appId, url: "https://live.example", secret: "s1"),
                WebhookEndpoint(id: "dead", appId: F.appId, url: "https://dead.example", secret: "s2"),
            ])
        try await store.write { tx in
            try tx.saveApp(OrderedWalkPlanTests.other, at: F.at(0))
            _ = try tx.saveWebhookEndpoint(
                WebhookEndpoint(
                    id: "other", appId: OrderedWalkPlanTests.other.id, url: "https://o.example", secret: "s"),
                at: F.at(0))
            for appId in [OrderedWalkPlanTests.other.id, F.appId] {
                for n in 0..<Self.customers {
                    let customer = try tx.ensureCustomer(appId: appId, appUserId: "user-\(n)", at: F.at(0)).id
                    func event(_ index: Int) throws -> Int64 {
                        let event = WebhookEvents.event(id: "e\(index)", appUserId: "user-\(n)", at: F.at(0))
                        return try #require(try tx.appendEvents([event], customerId: customer, at: F.at(0)).first)
                            .sequence
                    }
                    func outbox(_ event: Int64, _ endpoint: String, failed: Bool, delivered: Bool, dead: Bool) throws {
                        _ = try tx.sql(
                            """
                            INSERT INTO webhook_outbox (event_row_id, endpoint_id, customer_id, attempts,
                                                        next_attempt_at, last_error, delivered_at, dead_lettered_at,
                                                        created_at)
                            VALUES ($1, $2, $3, 1, 0, $4, $5, $6, 0)
                            """, .integer(event), .text(endpoint), .integer(customer),
                            failed ? .text("timeout") : .null, delivered ? .integer(1) : .null,
                            dead ? .integer(1) : .null)
                    }
                    func queue(_ endpoint: String, due: Timestamp?) throws {
                        _ = try tx.sql(
                            "INSERT INTO webhook_queues (customer_id, endpoint_id, next_attempt_at) VALUES ($1, $2, $3)",
                            .integer(customer), .text(endpoint), due.map(SQLValue.init) ?? .null)
                    }
                    let first = try event(0)
                    let deadLettered = n % 100 == 0
                    if appId == F.appId {
                        // Every seventh of the others failed at `live` too, and was dead-lettered
                        // there: the app's failed deliveries interleave two endpoints.
                        let liveFailed = n >= Self.dueCustomers && n % 7 == 3
                        try outbox(first, "live", failed: liveFailed, delivered: !liveFailed, dead: liveFailed)
                        try outbox(first, "dead", failed: true, delivered: false, dead: deadLettered)
                        try queue("dead", due: deadLettered ? nil : Self.deadRetry)
                        if n < Self.dueCustomers {
                            try outbox(try event(1), "live", failed: false, delivered: false, dead: false)
                            try queue("live", due: Self.dueFrom.adding(milliseconds: Int64(Self.dueCustomers - n)))
                        } else {
                            try queue("live", due: nil)
                        }
                    } else {
                        try outbox(first, "other", failed: true, delivered: false, dead: deadLettered)
                        try queue("other", due: deadLettered ? nil : Self.deadRetry)
                    }
                }
            }
            try tx.refreshPlannerStatistics()
        }
    }

    static func customerIds(_ store: any Store, appId: String = F.appId) async throws -> [Int64] {
        try await store.read { reader in
            try reader.sql("SELECT id FROM customers WHERE app_id = $1 ORDER BY id", .text(appId)).map {
                row throws(StoreError) in try row.integer(0)
            }
        }
    }

    static func claim(_ store: any Store, _ endpoint: String, at now: Timestamp) async throws -> [OutboxDelivery] {
        try await StoreConformanceTests.claim(store, endpoint, "w", at: now, queues: 10, batch: 10)
    }

    /// PostgreSQL: `index` walked, and neither the queues nor the outbox read whole.
    static func expectIndexWalk(_ plan: String, index: String) {
        OrderedWalkPlanTests.expectIndexRead(plan, index: index, tables: ["webhook_queues", "webhook_outbox"])
    }

    @Test(arguments: Backend.enabled)
    func dueEndpointsReadEachEndpointsFirstDueQueue(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.seed(store)
            let plan = try await store.read { reader in
                try reader.queryPlan(SQLStoreTransaction.dueEndpoints, [SQLValue(F.at(5)), .integer(1_000)])
            }
            if backend == .sqlite {
                #expect(plan.contains("SEARCH q USING INDEX webhook_queues_due (endpoint_id=? AND next_attempt_at<?)"))
                #expect(plan.contains("SEARCH o USING INDEX webhook_outbox_queue (endpoint_id=? AND customer_id=?)"))
                #expect(!plan.contains("SCAN q"), "\(plan)")
                #expect(!plan.contains("LIST SUBQUERY"), "\(plan)")
            } else {
                Self.expectIndexWalk(plan, index: "webhook_queues_due")
            }
            func due(at now: Timestamp, limit: Int = 1_000) async throws -> [String] {
                try await store.read { try $0.dueDeliveryEndpoints(now: now, limit: limit) }
            }
            #expect(try await due(at: Self.dueFrom) == [])
            #expect(try await due(at: F.at(5)) == ["live"])
            #expect(try await due(at: Self.deadRetry) == ["live", "dead", "other"])
            #expect(try await due(at: Self.deadRetry, limit: 1) == ["live"])
        }
    }

    @Test(arguments: Backend.enabled)
    func oneEndpointsClaimWalksItsDueQueuesInOrder(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.seed(store)
            let plan = try await store.read { reader in
                try reader.queryPlan(
                    SQLStoreTransaction.deliveryCandidates(
                        lock: backend == .postgres ? "FOR UPDATE OF q SKIP LOCKED" : "", endpoint: true),
                    [SQLValue(Self.deadRetry), .integer(10), .text("dead")])
            }
            OrderedWalkPlanTests.expectOrderedWalk(plan, index: "webhook_queues_due", backend: backend)
            if backend == .sqlite {
                #expect(plan.contains("SEARCH o USING INDEX webhook_outbox_queue (endpoint_id=? AND customer_id=?)"))
                #expect(!plan.contains("LIST SUBQUERY"), "\(plan)")
            } else {
                Self.expectIndexWalk(plan, index: "webhook_queues_due")
            }
            let ids = try await Self.customerIds(store)
            try #require(ids.count == Self.customers)
            // `live`: the due queues by due time (the last customer first), each with its one pending row.
            let live = try await Self.claim(store, "live", at: F.at(5))
            #expect(live.map(\.lease.customerId) == Array(ids[Self.dueCustomers - 10..<Self.dueCustomers].reversed()))
            #expect(live.map(\.event.event.id) == Array(repeating: "e1", count: 10))
            // `dead`, at its retry: due at one instant, so by customer, the dead-lettered skipped.
            let dead = try await Self.claim(store, "dead", at: Self.deadRetry)
            let backingOff = ids.enumerated().filter { $0.offset % 100 != 0 }.map(\.element)
            #expect(dead.map(\.lease.customerId) == Array(backingOff.prefix(10)))
            #expect(try await Self.claim(store, "dead", at: Self.deadRetry.adding(milliseconds: -1)).isEmpty)
        }
    }

    @Test(arguments: Backend.enabled)
    func failedDeliveryPagesWalkEachEndpointsFailures(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.seed(store)
            // Each endpoint's page walks its failures, whether it has many (`dead`) or few (`live`).
            for endpoint in ["dead", "live"] {
                let plan = try await store.read { reader in
                    try reader.queryPlan(
                        backend == .postgres
                            ? SQLStoreTransaction.failedDeliveriesOfEndpointPostgres
                            : SQLStoreTransaction.failedDeliveriesOfEndpointSQLite,
                        [.text(endpoint), .integer(0), .integer(50)])
                }
                OrderedWalkPlanTests.expectOrderedWalk(plan, index: "webhook_outbox_failed", backend: backend)
                if backend == .postgres { Self.expectIndexWalk(plan, index: "webhook_outbox_failed") }
            }
            // The app's failures: its `dead` rows, one per customer, and every seventh customer's
            // `live` row, interleaved in id order; the other app's are not in its pages.
            let failed = try await store.read { reader in
                try reader.sql(
                    """
                    SELECT id, endpoint_id FROM webhook_outbox
                    WHERE endpoint_id IN ('dead', 'live') AND delivered_at IS NULL
                      AND (dead_lettered_at IS NOT NULL OR last_error IS NOT NULL)
                    ORDER BY id
                    """
                ).map { row throws(StoreError) in (id: try row.integer(0), endpoint: try row.text(1)) }
            }
            let liveFailures = (Self.dueCustomers..<Self.customers).filter { $0 % 7 == 3 }.count
            try #require(failed.count == Self.customers + liveFailures)
            func page(after: Int64?, limit: Int) async throws -> [OutboxEntry] {
                try await store.read { try $0.failedDeliveries(appId: F.appId, after: after, limit: limit) }
            }
            let first = try await page(after: nil, limit: 50)
            #expect(first.map(\.id) == failed.prefix(50).map(\.id))
            #expect(first.map(\.endpointId) == failed.prefix(50).map(\.endpoint))
            #expect(Set(first.map(\.endpointId)) == ["dead", "live"])
            let middle = try await page(after: failed[1_499].id, limit: 50)
            #expect(middle.map(\.id) == failed[1_500..<1_550].map(\.id))
            #expect(
                try await page(after: failed[failed.count - 3].id, limit: 50).map(\.id) == failed.suffix(2).map(\.id))
            #expect(try await page(after: failed.last?.id, limit: 50).isEmpty)
            #expect(try await page(after: nil, limit: 0).isEmpty)
        }
    }

    @Test func expiredLeaseSweepReadsOnlyLeasedRows() async throws {
        try await withStore(.sqlite) { store, _ in
            let plan = try await store.read { reader in
                try reader.queryPlan(SQLStoreTransaction.expiredLeaseSweep, [.integer(1_000), .integer(100)])
            }
            #expect(plan.contains("webhook_outbox_lease (lease_expires_at"), "\(plan)")
            #expect(!plan.contains("webhook_outbox_due"), "\(plan)")
            #expect(!plan.contains("SCAN"), "\(plan)")
        }
    }
}
