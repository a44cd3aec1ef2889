import AppStoreModels
import Foundation
import StorekeeperTesting
import Synchronization
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// The outbox claimed queue by queue (one customer's deliveries to one endpoint): at its head,
/// as a unit, in event order, by one claimer at a time.
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

    static func claim(
        _ store: any Store, _ endpoint: String?, _ owner: String, at now: Timestamp, queues: Int = 100,
        batch: Int = 100, lease: Int64 = 60_000
    ) async throws -> [OutboxDelivery] {
        try await store.write { tx in
            try tx.claimDeliveries(
                endpointId: endpoint, owner: owner, now: now, leaseMilliseconds: lease, queues: queues,
                batchSize: batch, maxAttempts: 100)
        }
    }

    @Test("outbox: a customer's queue is claimed at its head, as a unit, in event order", arguments: Backend.enabled)
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
            func claim(_ endpoint: String?, _ owner: String, at now: Timestamp, queues: Int = 100, batch: Int = 100)
                async throws -> [OutboxDelivery]
            {
                try await Self.claim(store, endpoint, owner, at: now, queues: queues, batch: batch)
            }
            func due(at now: Timestamp) async throws -> [String] {
                try await store.read { try $0.dueDeliveryEndpoints(now: now, limit: 10) }
            }
            #expect(try await due(at: t0) == ["a", "b"])
            #expect(try await store.read { try $0.dueDeliveryEndpoints(now: t0, limit: 1) } == ["a"])

            // One claim of endpoint a takes customer 0's head there (a batch of one) and nothing of b.
            let head = try await claim("a", "w1", at: t0, queues: 1, batch: 1)
            #expect(head.map(\.id) == [c0a[0]])
            let lease1 = try #require(head.first?.lease)
            #expect(lease1.customerId == c0 && lease1.endpointId == "a" && lease1.owner == "w1")
            // While its queue is leased, customer 0's later deliveries to a wait; customer 1's
            // whole queue goes, in order, under one lease.
            let other = try await claim("a", "w2", at: t0)
            #expect(other.map(\.id) == c1a)
            #expect(Set(other.map(\.lease)).count == 1)
            for delivery in other {
                #expect(try await store.write { try $0.markDelivered(id: delivery.id, lease: delivery.lease, at: t0) })
            }
            #expect(try await store.write { try $0.releaseDeliveries(other[0].lease) })
            #expect(try await due(at: t0) == ["b"])

            // Given back unsent: the attempt uncounted, the lease gone, the queue free at once.
            #expect(
                try await store.write {
                    try $0.releaseDeliveries(
                        DeliveryLease(
                            customerId: c0, endpointId: "a", owner: "w2", generation: lease1.generation,
                            expiresAt: lease1.expiresAt))
                } == false)
            #expect(try await store.write { try $0.releaseDeliveries(lease1) })
            let released = try #require(try await store.read { try $0.outboxEntry(id: c0a[0]) })
            #expect(released.attempts == 0)
            #expect(released.leaseOwner == nil && released.leaseExpiresAt == nil && released.lastError == nil)
            let whole = try await claim("a", "w3", at: t0)
            #expect(whole.map(\.id) == c0a)
            #expect(whole.map(\.attempt) == Array(repeating: 1, count: c0a.count))
            let lease3 = try #require(whole.first?.lease)

            // A failure of the head holds the whole queue until its retry, and an event committed
            // meanwhile joins the wait, whatever its own enqueue time.
            let retryAt = t0.adding(milliseconds: 60_000)
            #expect(
                try await store.write {
                    try $0.markFailed(id: c0a[0], lease: lease3, error: "http_status_500", retryAt: retryAt, at: t0)
                })
            #expect(try await store.write { try $0.releaseDeliveries(lease3) })
            let entry = try #require(try await store.read { try $0.outboxEntry(id: c0a[1]) })
            #expect(entry.attempts == 0 && entry.leaseOwner == nil)
            let late = try await WebhookEvents.commit(
                "late-0", appUserId: "user-n-0", appId: F.appId, into: store, at: t0.adding(milliseconds: 10))
            #expect(try await claim("a", "w4", at: retryAt.adding(milliseconds: -1)).isEmpty)
            // At the retry the queue goes from its head: the failed one first, then the rest, then
            // the late event.
            let retried = try await claim("a", "w4", at: retryAt, batch: 1)
            #expect(retried.map(\.id) == [c0a[0]])
            let lease4 = try #require(retried.first?.lease)
            // Dead-lettered, it no longer holds the queue back.
            #expect(
                try await store.write {
                    try $0.markFailed(id: c0a[0], lease: lease4, error: "timeout", retryAt: nil, at: retryAt)
                })
            #expect(try await store.write { try $0.releaseDeliveries(lease4) })
            let lateRows = try await store.read { try $0.outboxEntries(eventSequence: late.sequence) }
            let lateA = try #require(lateRows.first { $0.endpointId == "a" })
            #expect(try await claim("a", "w5", at: retryAt).map(\.id) == Array(c0a.dropFirst()) + [lateA.id])
            // The all-endpoint claim keeps the same order: customer 0's head at b.
            let rest = try await claim(nil, "w6", at: retryAt, queues: 1, batch: 1)
            #expect(rest.map(\.id) == [c0b[0]])
        }
    }

    /// Several claimers racing over the same queues (PostgreSQL: separate connections): a queue
    /// is never held by two of them at once, and each customer's deliveries are recorded in
    /// event order, each once.
    @Test("outbox: concurrent claimers never hold one queue at once", arguments: Backend.enabled)
    func outboxExclusiveClaims(backend: Backend) async throws {
        try await withStore(backend) { store, database in
            try await F.setUp(
                store, endpoints: [WebhookEndpoint(id: "x", appId: F.appId, url: "https://x.example", secret: "s")])
            let t0 = F.at(1)
            let customers = 6
            let perCustomer = 8
            for index in 0..<perCustomer {
                for customer in 0..<customers {
                    try await WebhookEvents.commit(
                        "e-\(customer)-\(index)", appUserId: "race-\(customer)", appId: F.appId, into: store, at: t0)
                }
            }
            // Each claimer: on PostgreSQL its own store (its own connections) on the same database;
            // SQLite has one writer, so they share it.
            var opened: [any Store] = []
            if backend == .postgres {
                for _ in 1..<4 { opened.append(try await database.open()) }
            }
            let stores: [any Store] = [store] + (opened.isEmpty ? [store, store, store] : opened)

            let log = ClaimLog()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, claimer) in stores.enumerated() {
                    group.addTask {
                        var idle = 0
                        while idle < 3 {
                            let claimed = try await claimer.write { tx in
                                try tx.claimDeliveries(
                                    endpointId: "x", owner: "w\(index)", now: t0, leaseMilliseconds: 60_000,
                                    queues: 2, batchSize: 1 + index % 3, maxAttempts: 100)
                            }
                            if claimed.isEmpty {
                                idle += 1
                                try await Task.sleep(for: .milliseconds(5))
                                continue
                            }
                            idle = 0
                            let leases = Set(claimed.map(\.lease))
                            log.state.withLock { log in
                                for lease in leases where !log.held.insert(lease.customerId).inserted {
                                    log.overlaps += 1
                                }
                            }
                            for delivery in claimed {
                                let marked = try await claimer.write { tx in
                                    try tx.markDelivered(id: delivery.id, lease: delivery.lease, at: t0)
                                }
                                if marked {
                                    log.state.withLock {
                                        $0.delivered[delivery.event.customerId, default: []].append(
                                            delivery.event.event.id)
                                    }
                                }
                            }
                            // Freed before the release commits, so a later holder is never taken for an overlap.
                            log.state.withLock { log in for lease in leases { log.held.remove(lease.customerId) } }
                            for lease in leases { _ = try await claimer.write { try $0.releaseDeliveries(lease) } }
                        }
                    }
                }
                try await group.waitForAll()
            }
            for other in opened { await other.close() }
            let result = log.state.withLock { $0 }
            #expect(result.overlaps == 0)
            #expect(result.delivered.count == customers)
            for (_, ids) in result.delivered {
                let customer = ids.first.map { $0.split(separator: "-")[1] } ?? "?"
                #expect(ids == (0..<perCustomer).map { "e-\(customer)-\($0)" })
            }
            #expect(try await store.read { try $0.outboxBacklog() }.pending == 0)
        }
    }
}

/// What the racing claimers saw: queues held now (by customer), overlaps, deliveries recorded.
/// - Note: Thread-safe: behind a `Mutex`.
private final class ClaimLog: Sendable {
    struct State {
        var held: Set<Int64> = []
        var overlaps = 0
        var delivered: [Int64: [String]] = [:]
    }

    let state = Mutex(State())
}
