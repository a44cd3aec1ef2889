import Testing

@testable import Storage

/// A webhook claim for one endpoint reads that endpoint's pending rows, and the sweep of expired
/// last attempts reads only leased rows (migration 0035): neither walks every pending delivery of
/// every endpoint, which one dead endpoint's backlog made each claim pay (58 ms and 12 ms with
/// 100,000 rows pending, in the write transaction). SQLite's plans, made without statistics,
/// depend on the schema alone; PostgreSQL's on its statistics (the delivery suites check what
/// both engines claim).
@Suite struct DeliveryClaimPlanTests {
    static func plan(_ sql: String, _ arguments: [SQLValue]) async throws -> String {
        var text = ""
        try await withStore(.sqlite) { store, _ in
            text = try await store.read { reader in try reader.queryPlan(sql, arguments) }
        }
        return text
    }

    @Test func oneEndpointsClaimReadsOnlyItsPendingRows() async throws {
        let plan = try await Self.plan(
            SQLStoreTransaction.deliveryCandidates(lock: "", endpoint: true),
            [.integer(1_000), .integer(100), .text("endpoint")])
        #expect(plan.contains("SEARCH o USING INDEX webhook_outbox_queue (endpoint_id=?)"), "\(plan)")
        #expect(!plan.contains("webhook_outbox_due"), "\(plan)")
    }

    @Test func expiredLeaseSweepReadsOnlyLeasedRows() async throws {
        let plan = try await Self.plan(SQLStoreTransaction.expiredLeaseSweep, [.integer(1_000), .integer(100)])
        #expect(plan.contains("webhook_outbox_lease (lease_expires_at"), "\(plan)")
        #expect(!plan.contains("webhook_outbox_due"), "\(plan)")
        #expect(!plan.contains("SCAN"), "\(plan)")
    }
}
