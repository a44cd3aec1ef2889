import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// A webhook queue with nothing pending leaves the due range (`next_attempt_at` NULL, migration
/// 0037) and comes back with its next delivery, so the worker's rounds read only queues with
/// work. A drained queue that missed a delivery would never be claimed again: every path that
/// ends a queue's last delivery drains it, every path that adds one reopens it, and on
/// PostgreSQL the two cannot interleave so that the delivery is missed.
extension StoreConformanceTests {
    /// When queue (`customerId`, `endpoint`) is due: nil when drained.
    static func queueDue(_ store: any Store, _ customerId: Int64, _ endpoint: String) async throws -> Timestamp? {
        let rows = try await store.read { reader in
            try reader.sql(
                "SELECT next_attempt_at FROM webhook_queues WHERE customer_id = $1 AND endpoint_id = $2",
                .integer(customerId), .text(endpoint))
        }
        return try #require(rows.first).optionalTimestamp(0)
    }

    static func hook(_ store: any Store) async throws {
        try await F.setUp(
            store, endpoints: [WebhookEndpoint(id: "hook", appId: F.appId, url: "https://hook.example", secret: "s")])
    }

    @Test("outbox: a drained queue leaves the due range, and its next delivery reopens it", arguments: Backend.enabled)
    func outboxQueueDrain(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.hook(store)
            let (t0, t1, t2, t3) = (F.at(1), F.at(2), F.at(3), F.at(4))
            func claim(at now: Timestamp, lease: Int64 = 60_000) async throws -> [OutboxDelivery] {
                try await Self.claim(store, "hook", "w", at: now, lease: lease)
            }
            func due(at now: Timestamp) async throws -> [String] {
                try await store.read { try $0.dueDeliveryEndpoints(now: now, limit: 10) }
            }
            let first = try await WebhookEvents.commit("e1", appUserId: "ann", appId: F.appId, into: store, at: t0)
            let ann = first.customerId
            #expect(try await Self.queueDue(store, ann, "hook") == t0)

            // Delivered: the queue is drained, and no round or claim finds it.
            let one = try #require(try await claim(at: t0).first)
            #expect(one.event.sequence == first.sequence)
            #expect(try await store.write { try $0.markDelivered(id: one.id, lease: one.lease, at: t0) })
            #expect(try await Self.queueDue(store, ann, "hook") == nil)
            #expect(try await store.write { try $0.releaseDeliveries(one.lease) })
            #expect(try await due(at: t3) == [])
            #expect(try await claim(at: t3).isEmpty)

            // A new event reopens it, due when enqueued; a retry keeps it open; dead-lettering
            // its last delivery drains it.
            let second = try await WebhookEvents.commit("e2", appUserId: "ann", appId: F.appId, into: store, at: t1)
            #expect(try await Self.queueDue(store, ann, "hook") == t1)
            #expect(try await due(at: t1) == ["hook"])
            let two = try #require(try await claim(at: t1).first)
            #expect(two.event.sequence == second.sequence)
            #expect(
                try await store.write {
                    try $0.markFailed(id: two.id, lease: two.lease, error: "timeout", retryAt: t2, at: t1)
                })
            #expect(try await Self.queueDue(store, ann, "hook") == t2)
            #expect(try await store.write { try $0.releaseDeliveries(two.lease) })
            let retried = try #require(try await claim(at: t2).first)
            #expect(retried.id == two.id)
            #expect(
                try await store.write {
                    try $0.markFailed(id: two.id, lease: retried.lease, error: "timeout", retryAt: nil, at: t2)
                })
            #expect(try await Self.queueDue(store, ann, "hook") == nil)
            #expect(try await store.write { try $0.releaseDeliveries(retried.lease) })

            // A replayed dead letter reopens it, due at the replay.
            #expect(try await store.write { try $0.replayDelivery(id: two.id, appId: F.appId, at: t3) })
            #expect(try await Self.queueDue(store, ann, "hook") == t3)
            let replayed = try await claim(at: t3, lease: 1_000)
            #expect(replayed.map(\.id) == [two.id])

            // The worker dies during the last allowed attempt: the sweep dead-letters the
            // delivery when its lease has expired, and drains the queue.
            let swept = try await store.write { tx in
                try tx.claimDeliveries(
                    endpointId: "hook", owner: "w2", now: t3.adding(milliseconds: 2_000), leaseMilliseconds: 60_000,
                    queues: 10, batchSize: 10, maxAttempts: 1)
            }
            #expect(swept.isEmpty)
            let entry = try #require(try await store.read { try $0.outboxEntry(id: two.id) })
            #expect(entry.deadLetteredAt == t3.adding(milliseconds: 2_000) && entry.lastError == "timeout")
            #expect(try await Self.queueDue(store, ann, "hook") == nil)

            // An event whose deliveries were already enqueued does not reopen the queue.
            let bob = try await WebhookEvents.commit("b1", appUserId: "bob", appId: F.appId, into: store, at: t3)
            #expect(try await store.write { try $0.enqueueDeliveries(of: [first], appId: F.appId, at: t3) } == 0)
            #expect(try await Self.queueDue(store, ann, "hook") == nil)
            #expect(try await claim(at: t3).map(\.event.sequence) == [bob.sequence])
        }
    }

    /// PostgreSQL, two writers: one marks a queue's last delivery delivered, the other enqueues a
    /// delivery to that queue. `enqueueFirst`: the enqueue holds its transaction open after its
    /// writes until the mark waits for it; else the mark (and its drain) holds its transaction
    /// open until the enqueue waits. Either way the new delivery is claimed afterwards.
    @Test(
        "PostgreSQL: a delivery enqueued while its queue's last one is marked delivered is claimed",
        .enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage), arguments: [true, false])
    func outboxDrainRace(enqueueFirst: Bool) async throws {
        try await withStore(.postgres) { store, database in
            try await Self.hook(store)
            let t0 = F.at(1)
            let first = try await WebhookEvents.commit("e1", appUserId: "ann", appId: F.appId, into: store, at: t0)
            let claimed = try await Self.claim(store, "hook", "w", at: t0)
            let delivery = try #require(claimed.first)

            let hold = TransactionHold()
            func enqueue() async throws -> StoredEvent {
                try await store.write { tx in
                    let stored = try tx.appendEvents(
                        [WebhookEvents.event(id: "e2", appUserId: "ann", at: t0)], customerId: first.customerId,
                        at: t0)
                    try tx.enqueueDeliveries(of: stored, appId: F.appId, at: t0)
                    if enqueueFirst { hold.hold() }
                    return try #require(stored.first)
                }
            }
            func mark() async throws -> Bool {
                try await store.write { tx in
                    let marked = try tx.markDelivered(id: delivery.id, lease: delivery.lease, at: t0)
                    if !enqueueFirst { hold.hold() }
                    return marked
                }
            }
            let second: StoredEvent
            if enqueueFirst {
                let enqueued = Task { try await enqueue() }
                try await hold.untilHeld()
                let marked = Task { try await mark() }
                try await hold.releaseOnceWaiting(
                    database.url, statement: "SELECT lease_generation FROM webhook_queues")
                second = try await enqueued.value
                #expect(try await marked.value)
            } else {
                let marked = Task { try await mark() }
                try await hold.untilHeld()
                let enqueued = Task { try await enqueue() }
                try await hold.releaseOnceWaiting(database.url, statement: "INSERT INTO webhook_queues")
                #expect(try await marked.value)
                second = try await enqueued.value
            }
            #expect(try await Self.queueDue(store, first.customerId, "hook") == t0)
            #expect(try await store.write { try $0.releaseDeliveries(delivery.lease) })
            let next = try await Self.claim(store, "hook", "w", at: t0)
            #expect(next.map(\.event.sequence) == [second.sequence])
        }
    }
}

extension StoreConformanceTests {
    /// What an earlier version (or a drain skipped for a lock) can leave: a queue drained, or
    /// missing, with a delivery pending; a queue due with nothing pending. The repair makes each
    /// agree with the outbox and touches nothing else.
    @Test("outbox: the queue repair reopens stranded queues and drains empty due ones", arguments: Backend.enabled)
    func outboxQueueRepair(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.hook(store)
            let (t0, t1, now) = (F.at(1), F.at(2), F.at(3))
            var customers: [String: Int64] = [:]
            var pending: [String: Int64] = [:]
            for user in ["ann", "bob", "cy", "dee", "eve"] {
                let event = try await WebhookEvents.commit(
                    "\(user)-1", appUserId: user, appId: F.appId, into: store, at: t0)
                customers[user] = event.customerId
                pending[user] = event.sequence
            }
            let (ann, bob, cy, dee, eve) = (
                customers["ann"]!, customers["bob"]!, customers["cy"]!, customers["dee"]!, customers["eve"]!
            )
            try await store.write { tx in
                // ann: drained with its delivery pending; bob: no queue at all; cy: due at t1
                // with its delivery delivered; dee: due with its delivery pending (as it
                // should be); eve: delivered and drained (as it should be).
                _ = try tx.sql("UPDATE webhook_queues SET next_attempt_at = NULL WHERE customer_id = $1", .integer(ann))
                _ = try tx.sql("DELETE FROM webhook_queues WHERE customer_id = $1", .integer(bob))
                _ = try tx.sql(
                    "UPDATE webhook_outbox SET delivered_at = $1 WHERE customer_id IN ($2, $3)", SQLValue(t1),
                    .integer(cy), .integer(eve))
                _ = try tx.sql(
                    "UPDATE webhook_queues SET next_attempt_at = $2 WHERE customer_id = $1", .integer(cy), SQLValue(t1))
                _ = try tx.sql("UPDATE webhook_queues SET next_attempt_at = NULL WHERE customer_id = $1", .integer(eve))
            }
            let found = try await store.read { try $0.deliveryQueueMismatches(limit: 10) }
            let key = { (customer: Int64) in DeliveryQueueKey(customerId: customer, endpointId: "hook") }
            #expect(found == DeliveryQueueMismatches(stranded: [key(ann), key(bob)], emptyDue: [key(cy)]))
            #expect(
                try await store.read { try $0.deliveryQueueMismatches(limit: 1) }
                    == DeliveryQueueMismatches(stranded: [key(ann)], emptyDue: [key(cy)]))
            // Each is checked again when mended: dee's queue, named as stranded, is open and stays
            // as it is; eve's, named as empty, is drained already.
            let named = DeliveryQueueMismatches(
                stranded: found.stranded + [key(dee)], emptyDue: found.emptyDue + [key(eve)])
            #expect(
                try await store.write { try $0.repairDeliveryQueues(named, now: now) }
                    == DeliveryQueueRepair(reopened: 2, drained: 1))
            #expect(try await Self.queueDue(store, ann, "hook") == now)
            #expect(try await Self.queueDue(store, bob, "hook") == now)
            #expect(try await Self.queueDue(store, cy, "hook") == nil)
            #expect(try await Self.queueDue(store, dee, "hook") == t0)
            #expect(try await Self.queueDue(store, eve, "hook") == nil)
            #expect(try await store.read { try $0.deliveryQueueMismatches(limit: 10) }.isEmpty)
            #expect(
                try await store.write { try $0.repairDeliveryQueues(named, now: now) }
                    == DeliveryQueueRepair(reopened: 0, drained: 0))
            let claimed = try await Self.claim(store, "hook", "w", at: now)
            // dee was due first; then ann and bob, by customer.
            #expect(claimed.map(\.event.sequence) == [pending["dee"]!, pending["ann"]!, pending["bob"]!])
        }
    }
}

extension StoreConformanceTests {
    /// PostgreSQL: an endpoint deleted while the repair waits to reopen its queue fails that
    /// queue's foreign key once the deletion commits. The queue has nothing left to repair: it
    /// is skipped, and the repair mends the others (before, the whole pass rolled back).
    @Test(
        "PostgreSQL: the queue repair skips a queue whose endpoint is deleted meanwhile",
        .enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage))
    func outboxQueueRepairBesideADeletion() async throws {
        try await withStore(.postgres) { store, database in
            try await F.setUp(
                store,
                endpoints: [
                    WebhookEndpoint(id: "gone", appId: F.appId, url: "https://gone.example", secret: "s1"),
                    WebhookEndpoint(id: "hook", appId: F.appId, url: "https://hook.example", secret: "s2"),
                ])
            let (t0, now) = (F.at(1), F.at(2))
            let event = try await WebhookEvents.commit("e1", appUserId: "ann", appId: F.appId, into: store, at: t0)
            let ann = event.customerId
            try await store.write { tx in
                _ = try tx.sql("UPDATE webhook_queues SET next_attempt_at = NULL WHERE customer_id = $1", .integer(ann))
            }
            let found = try await store.read { try $0.deliveryQueueMismatches(limit: 10) }
            #expect(found.stranded.map(\.endpointId) == ["gone", "hook"])

            let hold = TransactionHold()
            let deletion = Task {
                try await store.write { tx in
                    let deleted = try tx.deleteWebhookEndpoint(id: "gone", appId: F.appId)
                    hold.hold()
                    return deleted
                }
            }
            try await hold.untilHeld()
            let repair = Task { try await store.write { tx in try tx.repairDeliveryQueues(found, now: now) } }
            try await hold.releaseOnceWaiting(database.url, statement: "INSERT INTO webhook_queues")
            #expect(try await deletion.value)
            #expect(try await repair.value == DeliveryQueueRepair(reopened: 1, drained: 0))
            #expect(try await Self.queueDue(store, ann, "hook") == now)
            let claimed = try await Self.claim(store, "hook", "w", at: now)
            #expect(claimed.map(\.event.sequence) == [event.sequence])
        }
    }
}
