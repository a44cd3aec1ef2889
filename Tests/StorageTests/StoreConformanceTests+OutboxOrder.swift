import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// The outbox claim per endpoint and in customer order, and giving a claim back.
extension StoreConformanceTests {
    /// Outbox ids by customer and endpoint, each list in event order.
    static func queues(_ store: any Store) async throws -> [String: [Int64]] {
        try await store.read { reader in
            var queues: [String: [Int64]] = [:]
            for row in try reader.sql(
                """
                SELECT o.id, e.customer_id, o.endpoint_id FROM webhook_outbox o
                JOIN lifecycle_events e ON e.id = o.event_row_id ORDER BY o.event_row_id, o.id
                """)
            {
                queues["\(try row.integer(1))|\(try row.text(2))", default: []].append(try row.integer(0))
            }
            return queues
        }
    }

    @Test("outbox: claims per endpoint keep each customer's order; a release uncounts", arguments: Backend.enabled)
    func outboxOrder(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(
                store,
                endpoints: [
                    WebhookEndpoint(id: "a", appId: F.appId, url: "https://a.example", secret: "s1"),
                    WebhookEndpoint(id: "b", appId: F.appId, url: "https://b.example", secret: "s2"),
                ])
            // Customer 0's notifications are ingested first, so all its events precede customer 1's.
            for notification in F.notifications(customers: 2, perCustomer: 2) {
                try await F.ingest(notification, into: store, now: F.at(1))
            }
            let (c0, c1) = try await store.read { reader in
                (
                    try reader.customer(appId: F.appId, .appUserId("user-n-0"))!.id,
                    try reader.customer(appId: F.appId, .appUserId("user-n-1"))!.id
                )
            }
            let queues = try await Self.queues(store)
            let (c0a, c1a, c0b) = (queues["\(c0)|a"]!, queues["\(c1)|a"]!, queues["\(c0)|b"]!)
            #expect(c0a.count >= 2 && c1a.count >= 2 && c0b.count == c0a.count)
            let t0 = F.at(1)
            let lease: Int64 = 60_000
            func claim(_ endpoint: String, _ owner: String, at now: Timestamp, limit: Int = 100) async throws -> [Int64]
            {
                try await store.write { tx in
                    try tx.claimDeliveries(
                        endpointId: endpoint, owner: owner, now: now, leaseMilliseconds: lease, limit: limit,
                        maxAttempts: 100)
                }.map(\.id)
            }
            func due(at now: Timestamp) async throws -> [String] {
                try await store.read { try $0.dueDeliveryEndpoints(now: now, limit: 10) }
            }
            #expect(try await due(at: t0) == ["a", "b"])
            #expect(try await store.read { try $0.dueDeliveryEndpoints(now: t0, limit: 1) } == ["a"])

            // One claim of endpoint a takes customer 0's oldest delivery there and nothing of b.
            #expect(try await claim("a", "w1", at: t0, limit: 1) == [c0a[0]])
            // While it is leased, customer 0's later deliveries to a wait; customer 1's do not.
            #expect(try await claim("a", "w1", at: t0) == c1a)
            #expect(try await due(at: t0) == ["b"])

            // Given back unsent: the lease is gone, the attempt uncounted, due when asked.
            #expect(
                try await store.write { try $0.releaseDelivery(id: c0a[0], owner: "w2", nextAttemptAt: t0) } == false)
            #expect(
                try await store.write {
                    try $0.releaseDelivery(id: c0a[0], owner: "w1", nextAttemptAt: t0.adding(milliseconds: 5_000))
                })
            let released = try #require(try await store.read { try $0.outboxEntry(id: c0a[0]) })
            #expect(released.attempts == 0)
            #expect(released.leaseOwner == nil && released.leaseExpiresAt == nil && released.lastError == nil)
            #expect(released.nextAttemptAt == t0.adding(milliseconds: 5_000))
            // Scheduled later, it still holds customer 0's later deliveries back.
            #expect(try await claim("a", "w2", at: t0.adding(milliseconds: 4_999)).isEmpty)
            #expect(try await due(at: t0.adding(milliseconds: 4_999)) == ["b"])
            // Once due, customer 0's whole queue to a goes, in order, attempt 1 for the released one.
            let t1 = t0.adding(milliseconds: 5_000)
            #expect(try await due(at: t1) == ["a", "b"])
            let whole = try await store.write { tx in
                try tx.claimDeliveries(
                    endpointId: "a", owner: "w2", now: t1, leaseMilliseconds: lease, limit: 100, maxAttempts: 100)
            }
            #expect(whole.map(\.id) == c0a)
            #expect(whole.map(\.attempt) == Array(repeating: 1, count: c0a.count))

            // A failure scheduled later holds the rest back; dead-lettered, it no longer does.
            for id in c0a.dropFirst() {
                #expect(try await store.write { try $0.releaseDelivery(id: id, owner: "w2", nextAttemptAt: t1) })
            }
            #expect(
                try await store.write {
                    try $0.markFailed(
                        id: c0a[0], owner: "w2", error: "http_status_500", retryAt: t1.adding(milliseconds: 60_000),
                        at: t1)
                })
            #expect(try await claim("a", "w3", at: t1.adding(milliseconds: 10)).isEmpty)
            // Retried (customer 1's leases from w1 have expired by then too), then dead-lettered.
            let t3 = t1.adding(milliseconds: 60_000)
            #expect(try await claim("a", "w3", at: t3, limit: 1) == [c0a[0]])
            #expect(
                try await store.write {
                    try $0.markFailed(id: c0a[0], owner: "w3", error: "timeout", retryAt: nil, at: t3)
                })
            #expect(try await claim("a", "w3", at: t3) == Array(c0a.dropFirst()) + c1a)
            // The all-endpoint claim keeps the same order: customer 0's deliveries to b, oldest first.
            let rest = try await store.write { tx in
                try tx.claimDeliveries(owner: "w4", now: t3, leaseMilliseconds: lease, limit: 1, maxAttempts: 100)
            }
            #expect(rest.map(\.id) == [c0b[0]])
        }
    }
}
