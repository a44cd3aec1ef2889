import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// The `Store` contract, run against every backend in `Backend.enabled`.
@Suite("Store conformance")
struct StoreConformanceTests {
    struct Planted: Error {}

    @Test("migrations are idempotent and recorded", arguments: Backend.enabled)
    func migrationsIdempotent(backend: Backend) async throws {
        let database = try await TestDatabase.make(backend)
        defer { Task { await database.drop() } }
        // Three instances starting at once: the lock lets one migrate, the others see it done.
        let stores = try await withThrowingTaskGroup(of: (any Store).self) { group in
            for _ in 0..<3 { group.addTask { try await database.open() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for store in stores {
            #expect(try await store.read { try $0.appliedMigrations() } == Migration.all.map(\.identifier))
            await store.close()
        }
        let again = try await database.open()
        #expect(try await again.read { try $0.count("schema_migrations") } == Int64(Migration.all.count))
        await again.close()
    }

    @Test("a schema newer than the binary refuses to open", arguments: Backend.enabled)
    func schemaTooNew(backend: Backend) async throws {
        let database = try await TestDatabase.make(backend)
        defer { Task { await database.drop() } }
        let store = try await database.open()
        try await store.write { tx in
            _ = try tx.sql(
                "INSERT INTO schema_migrations (identifier, applied_at) VALUES ($1, $2)", .text("9999_from_the_future"),
                .integer(0))
        }
        await store.close()
        do {
            _ = try await database.open()
            Issue.record("opened a database migrated by a newer binary")
        } catch let error as StoreError {
            #expect(error.code == .schemaTooNew)
            #expect(error.description.contains("newer Storekeeper"))
            #expect(error.description.contains("9999_from_the_future"))
        }
    }

    @Test("opening without migrating refuses an outdated schema", arguments: Backend.enabled)
    func schemaOutdated(backend: Backend) async throws {
        let database = try await TestDatabase.make(backend)
        defer { Task { await database.drop() } }
        do {
            _ = try await database.open(migrate: false)
            Issue.record("opened an unmigrated database without migrating")
        } catch let error as StoreError {
            #expect(error.code == .schemaOutdated)
            #expect(error.description.contains("storekeeper migrate"))
        }
    }

    @Test("apps, catalog, keys, endpoints and audit round-trip", arguments: Backend.enabled)
    func configuration(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let key = APIKeyRecord(
                id: "k1", appId: F.appId, kind: .secret, hash: String(repeating: "ab", count: 32), createdAt: F.at(0))
            let endpoint = WebhookEndpoint(id: "e1", appId: F.appId, url: "https://example.com/hook", secret: "s3cret")
            try await F.setUp(store, endpoints: [endpoint])
            try await store.write { tx in
                try tx.saveAPIKey(key)
                try tx.appendAudit(
                    NewAuditEntry(
                        at: F.at(1), actor: "cli", action: "app.create", appId: F.appId,
                        detail: .object(["bundleId": .string("com.example.app")])))
            }
            let read = try await store.read { reader in
                (
                    try reader.app(id: F.appId), try reader.catalog(appId: F.appId), try reader.apiKey(hash: key.hash),
                    try reader.webhookEndpoints(appId: F.appId), try reader.auditEntries(after: nil, limit: 10)
                )
            }
            // Read back as saved, with the version a first save gives (0007_resource_versions).
            var savedApp = F.app
            savedApp.version = 1
            var savedEndpoint = endpoint
            savedEndpoint.version = 1
            #expect(read.0 == savedApp)
            #expect(read.1 == F.catalog)
            #expect(read.2 == key)
            #expect(read.3 == [savedEndpoint])
            #expect(read.4.map(\.action) == ["app.create"])
            #expect(try await store.write { try $0.revokeAPIKey(id: "k1", at: F.at(2)) })
            #expect(try await store.write { try $0.revokeAPIKey(id: "k1", at: F.at(3)) } == false)
            #expect(try await store.read { try $0.apiKey(hash: key.hash)?.revokedAt } == F.at(2))
        }
    }

    @Test("errors carry a stable code and never the SQL arguments", arguments: Backend.enabled)
    func errorsHideArguments(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let secretHash = "deadbeef-secret-hash-value"
            let key = APIKeyRecord(id: "k1", appId: F.appId, kind: .public, hash: secretHash, createdAt: F.at(0))
            try await store.write { try $0.saveAPIKey(key) }
            do {
                try await store.write { tx in
                    var again = key
                    again.id = "k2"
                    try tx.saveAPIKey(again)
                }
                Issue.record("a duplicate key hash was accepted")
            } catch let error as StoreError {
                #expect(error.code == .duplicate)
                #expect(!error.description.contains(secretHash))
            }
            // A CHECK violation, and (PostgreSQL) a value of the wrong type: engines quote such
            // values in their messages; our descriptions must not.
            do {
                try await store.write { tx in
                    _ = try tx.sql(
                        "INSERT INTO api_keys (id, app_id, kind, key_hash, label, created_at) VALUES ($1, NULL, $2, $3, '', 0)",
                        .text("k9"), .text("leaky-argument-1"), .text("h9"))
                }
                Issue.record("a key of an unknown kind was accepted")
            } catch let error as StoreError {
                #expect(error.code == .constraintViolation)
                #expect(!error.description.contains("leaky-argument-1"))
            }
            if backend == .postgres {
                do {
                    try await store.read { tx in _ = try tx.sql("SELECT CAST($1 AS BIGINT)", .text("leaky-argument-2"))
                    }
                    Issue.record("a non-number cast to BIGINT")
                } catch let error as StoreError {
                    #expect(error.code == .database)
                    #expect(error.description.contains("22P02"))
                    #expect(!error.description.contains("leaky-argument-2"))
                }
            }
        }
    }

    @Test("ingestion is idempotent: a replay reports duplicate and changes nothing", arguments: Backend.enabled)
    func idempotentIngestion(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(
                store, endpoints: [WebhookEndpoint(id: "e1", appId: F.appId, url: "https://x", secret: "s")])
            let notifications = F.notifications(customers: 3, perCustomer: 4)
            for notification in notifications { #expect(try await F.ingest(notification, into: store)) }
            let before = try await F.snapshot(store)
            #expect(before["notifications"] == Int64(notifications.count))
            #expect(before["webhook_outbox"] == before["lifecycle_events"])
            for notification in notifications.reversed() {
                #expect(try await F.ingest(notification, into: store, now: F.now.adding(milliseconds: 5_000)) == false)
            }
            #expect(try await F.snapshot(store) == before)
            let record = try await store.read { try $0.notification(appId: F.appId, uuid: notifications[0].uuid) }
            #expect(record?.signedPayload == notifications[0].signedPayload)
            #expect(record?.outcome == "processed")
            // The same transaction version from another source is a duplicate too.
            let duplicate = try await store.write { tx in
                try tx.insertTransaction(
                    NewTransaction(
                        appId: F.appId, jws: "other", fact: notifications[0].transaction, source: "api",
                        receivedAt: F.now))
            }
            #expect(duplicate == .duplicate)
        }
    }

    @Test("a write that throws leaves nothing behind", arguments: Backend.enabled)
    func allOrNothing(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(
                store, endpoints: [WebhookEndpoint(id: "e1", appId: F.appId, url: "https://x", secret: "s")])
            let first = F.notifications(customers: 1, perCustomer: 1, prefix: "kept")[0]
            try await F.ingest(first, into: store)
            let before = try await F.snapshot(store)
            let doomed = F.notifications(customers: 1, perCustomer: 2, prefix: "doomed")
            await #expect(throws: Planted.self) {
                try await store.write { tx in
                    _ = try F.ingest(doomed[0], in: tx, now: F.now)
                    _ = try F.ingest(doomed[1], in: tx, now: F.now)
                    try tx.appendAudit(NewAuditEntry(at: F.now, actor: "test", action: "doomed", appId: F.appId))
                    _ = try tx.enqueueJob(
                        appId: nil, kind: "reconcile", payload: "{}", runAt: F.now, dedupeKey: nil, at: F.now)
                    throw Planted()
                }
            }
            #expect(try await F.snapshot(store) == before)
            #expect(try await store.read { try $0.notification(appId: F.appId, uuid: doomed[0].uuid) } == nil)
            #expect(try await store.read { try $0.customer(appId: F.appId, .appUserId(doomed[0].appUserId)) } == nil)
            // The connection is clean afterwards: the same ingestion now commits.
            #expect(try await F.ingest(doomed[0], into: store))
            #expect(try await store.read { try $0.notification(appId: F.appId, uuid: doomed[0].uuid) } != nil)
        }
    }

    @Test("customer state versions only move forward", arguments: Backend.enabled)
    func versionsForward(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let customer = try await store.write { try $0.ensureCustomer(appId: F.appId, appUserId: "u1", at: F.at(1)) }
            let info = { @Sendable (days: Int64) in
                CustomerInfo(customerId: "u1", environment: .production, evaluatedAt: F.at(days))
            }
            #expect(
                try await store.write {
                    try $0.saveCustomerInfo(info(1), customerId: customer.id, expectedVersion: nil, at: F.at(1))
                } == 1)
            #expect(
                try await store.write {
                    try $0.saveCustomerInfo(info(2), customerId: customer.id, expectedVersion: 1, at: F.at(2))
                } == 2)
            for stale in [nil, 1, 5] as [Int64?] {
                do {
                    _ = try await store.write {
                        try $0.saveCustomerInfo(info(9), customerId: customer.id, expectedVersion: stale, at: F.at(9))
                    }
                    Issue.record("a stale version \(String(describing: stale)) was accepted")
                } catch let error as StoreError {
                    #expect(error.code == .versionConflict)
                }
            }
            let stored = try await store.read { try $0.customerInfo(customerId: customer.id, environment: .production) }
            #expect(stored?.version == 2)
            #expect(stored?.info == info(2))
            #expect(try await store.read { try $0.customerInfo(customerId: customer.id, environment: .sandbox) } == nil)
        }
    }

    @Test("customers are found by every identifier; ownership moves", arguments: Backend.enabled)
    func customerIdentifiers(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let (a, b) = try await store.write { tx in
                let a = try tx.ensureCustomer(appId: F.appId, appUserId: "alice", at: F.at(1))
                let b = try tx.ensureCustomer(appId: F.appId, appUserId: "bob", at: F.at(1))
                try tx.addAlias("alice@old", customerId: a.id, at: F.at(1))
                try tx.addAppAccountToken("7E3FB20B-4CDF-4F4A-9F6A-1A2B3C4D5E6F", customerId: a.id, at: F.at(1))
                #expect(try tx.claimOriginalTransaction("o-1", customerId: a.id, at: F.at(1)) == nil)
                #expect(try tx.claimOriginalTransaction("o-1", customerId: a.id, at: F.at(1)) == nil)
                return (a, b)
            }
            let found = try await store.read { reader in
                [
                    CustomerLookup.appUserId("alice"), .alias("alice@old"),
                    .appAccountToken("7E3FB20B-4CDF-4F4A-9F6A-1A2B3C4D5E6F"), .originalTransactionId("o-1"),
                ]
                .map { try? reader.customer(appId: F.appId, $0)?.id }
            }
            #expect(found == [a.id, a.id, a.id, a.id])
            // The id alone, as a caller about to lock the customer asks: the same answers,
            // nil for an unknown value or another app.
            let ids = try await store.read { reader in
                let lookups: [CustomerLookup] = [
                    .appUserId("alice"), .alias("alice@old"), .appAccountToken("7E3FB20B-4CDF-4F4A-9F6A-1A2B3C4D5E6F"),
                    .originalTransactionId("o-1"), .appUserId("bob"), .appUserId("carol"), .alias("bob@old"),
                    .appAccountToken("nobody"), .originalTransactionId("o-2"),
                ]
                var ids = try lookups.map { try reader.customerId(appId: F.appId, $0) }
                ids.append(try reader.customerId(appId: "another-app", .appUserId("alice")))
                return ids
            }
            #expect(ids == [a.id, a.id, a.id, a.id, b.id, nil, nil, nil, nil, nil])
            await #expect(throws: StoreError.self) {
                try await store.write { tx in try tx.addAlias("alice@old", customerId: b.id, at: F.at(2)) }
            }
            // Restoring purchases on Bob's account moves the subscription to him.
            #expect(
                try await store.write { try $0.claimOriginalTransaction("o-1", customerId: b.id, at: F.at(3)) } == a.id)
            let bob = try await store.read { try $0.customer(id: b.id) }
            #expect(bob?.originalTransactionIds == ["o-1"])
            #expect(bob?.firstSeenAt == F.at(1))
            let later = try await store.write { try $0.ensureCustomer(appId: F.appId, appUserId: "bob", at: F.at(5)) }
            #expect(later.lastSeenAt == F.at(5))
            let earlier = try await store.write { try $0.ensureCustomer(appId: F.appId, appUserId: "bob", at: F.at(4)) }
            #expect(earlier.lastSeenAt == F.at(5))
        }
    }

    @Test("a shared purchase stays with its owner and serves the other customer too", arguments: Backend.enabled)
    func sharedPurchase(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let notification = F.notifications(customers: 1, perCustomer: 2, prefix: "shared")
            for each in notification { try await F.ingest(each, into: store) }
            let original = notification[0].transaction.originalTransactionId
            let (owner, guest) = try await store.write { tx in
                let owner = try #require(try tx.customer(appId: F.appId, .originalTransactionId(original)))
                let guest = try tx.ensureCustomer(appId: F.appId, appUserId: "guest", at: F.at(2))
                #expect(try tx.sharePurchase(original, customerId: guest.id, at: F.at(2)))
                #expect(try tx.sharePurchase(original, customerId: guest.id, at: F.at(2)) == false)
                return (owner, guest)
            }
            let (ownerFacts, guestFacts, sharing, stillOwner) = try await store.read { reader in
                (
                    try reader.facts(customerId: owner.id), try reader.facts(customerId: guest.id),
                    try reader.customersSharing(appId: F.appId, originalTransactionId: original),
                    try reader.customer(appId: F.appId, .originalTransactionId(original))?.id
                )
            }
            #expect(guestFacts.count == ownerFacts.count)
            #expect(Set(guestFacts) == Set(ownerFacts))
            #expect(sharing == [guest.id])
            #expect(stillOwner == owner.id)
            // The paged listing (GET …/transactions) shows the shared purchase as well.
            let (ownerPage, guestPage) = try await store.read { reader in
                (
                    try reader.storedFacts(customerId: owner.id, kind: .transaction, after: nil, limit: 50),
                    try reader.storedFacts(customerId: guest.id, kind: .transaction, after: nil, limit: 50)
                )
            }
            #expect(!guestPage.isEmpty)
            #expect(guestPage.map(\.sequence) == ownerPage.map(\.sequence))
            #expect(
                try await store.read { try $0.customersSharing(appId: "another-app", originalTransactionId: original) }
                    .isEmpty)
        }
    }

    @Test("facts are read back whole and paged with their raw payloads", arguments: Backend.enabled)
    func factsPaged(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let notifications = F.notifications(customers: 1, perCustomer: 5)
            for notification in notifications { try await F.ingest(notification, into: store) }
            let customer = try #require(
                try await store.read { try $0.customer(appId: F.appId, .appUserId(notifications[0].appUserId)) })
            let facts = try await store.read { try $0.facts(customerId: customer.id) }
            #expect(Set(facts) == Set(notifications.flatMap(\.facts)))
            var pages: [[StoredFact]] = []
            var cursor: Int64?
            repeat {
                let page = try await store.read { [cursor] in
                    try $0.storedFacts(customerId: customer.id, kind: .transaction, after: cursor, limit: 2)
                }
                if page.isEmpty { break }
                pages.append(page)
                cursor = page.last?.sequence
            } while true
            #expect(pages.map(\.count) == [2, 2, 1])
            #expect(pages.flatMap { $0 }.allSatisfy { $0.raw?.hasPrefix("jws.") == true })
            let notes = try await store.read {
                try $0.storedFacts(customerId: customer.id, kind: .notification, after: nil, limit: 100)
            }
            #expect(notes.map(\.raw) == notifications.map(\.signedPayload))
            let events = try await store.read { try $0.events(customerId: customer.id, after: nil, limit: 100) }
            #expect(!events.isEmpty)
            #expect(Set(events.map(\.event.id)).count == events.count)
        }
    }

    @Test("outbox: claim, lease expiry, fencing, heartbeat, redelivery, dead letter", arguments: Backend.enabled)
    func outbox(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(
                store,
                endpoints: [
                    WebhookEndpoint(id: "on", appId: F.appId, url: "https://on", secret: "s1"),
                    WebhookEndpoint(id: "off", appId: F.appId, url: "https://off", secret: "s2", isEnabled: false),
                ])
            try await F.ingest(F.notifications(customers: 1, perCustomer: 1)[0], into: store, now: F.at(1))
            let total = try await store.read { try $0.count("webhook_outbox") }
            #expect(total == (try await store.read { try $0.count("lifecycle_events") }))
            #expect(total >= 1)
            let backlog = try await store.read { try $0.outboxBacklog() }
            #expect(backlog.pending == Int(total))
            #expect(backlog.oldestCreatedAt == F.at(1))
            let t0 = F.at(1)
            let lease: Int64 = 60_000
            func claim(_ owner: String, at now: Timestamp, batch: Int = 100, maxAttempts: Int = 3) async throws
                -> [OutboxDelivery]
            {
                try await store.write {
                    try $0.claimDeliveries(
                        endpointId: nil, owner: owner, now: now, leaseMilliseconds: lease, queues: 100,
                        batchSize: batch, maxAttempts: maxAttempts)
                }
            }
            let claimed = try await claim("w1", at: t0)
            #expect(claimed.count == Int(total))
            #expect(claimed.allSatisfy { $0.attempt == 1 && $0.endpoint.id == "on" && $0.endpoint.secret == "s1" })
            #expect(Set(claimed.map(\.lease)).count == 1)
            let first = claimed[0]
            let lease1 = first.lease
            #expect(lease1.owner == "w1" && lease1.expiresAt == t0.adding(milliseconds: lease))
            // Leased: nobody else gets the queue until the lease expires.
            #expect(try await claim("w2", at: t0.adding(milliseconds: lease - 1)).isEmpty)
            // w1 crashed: after expiry w2 takes the queue from its head (attempt 2) under the next
            // generation, and w1 can no longer record, renew or give anything back.
            let redelivered = try await claim("w2", at: t0.adding(milliseconds: lease), batch: 1)
            #expect(redelivered.map(\.id) == [first.id])
            #expect(redelivered.first?.attempt == 2)
            #expect(redelivered.first?.event == first.event)
            let lease2 = try #require(redelivered.first?.lease)
            #expect(lease2.generation == lease1.generation + 1)
            #expect(
                try await store.write {
                    try $0.markDelivered(id: first.id, lease: lease1, at: t0.adding(milliseconds: lease))
                } == false)
            #expect(
                try await store.write {
                    try $0.markFailed(
                        id: first.id, lease: lease1, error: "timeout", retryAt: nil, at: t0.adding(milliseconds: lease))
                } == false)
            #expect(
                try await store.write {
                    try $0.renewDeliveryLease(lease1, now: t0.adding(milliseconds: lease), leaseMilliseconds: lease)
                } == nil)
            #expect(try await store.write { try $0.releaseDeliveries(lease1) } == false)
            // The heartbeat: renewed, the lease outlives its first expiry.
            let renewedAt = t0.adding(milliseconds: lease + 5)
            let renewed = try #require(
                try await store.write { try $0.renewDeliveryLease(lease2, now: renewedAt, leaseMilliseconds: lease) })
            #expect(renewed.expiresAt == renewedAt.adding(milliseconds: lease))
            #expect(renewed.generation == lease2.generation)
            #expect(try await claim("w9", at: t0.adding(milliseconds: 2 * lease)).isEmpty)
            // A failure schedules a retry; the queue is not due before it.
            let t1 = t0.adding(milliseconds: lease + 10)
            #expect(
                try await store.write {
                    try $0.markFailed(
                        id: first.id, lease: lease2, error: "HTTP 503", retryAt: t1.adding(milliseconds: 5_000), at: t1)
                })
            #expect(try await store.write { try $0.releaseDeliveries(lease2) })
            #expect(try await claim("w3", at: t1.adding(milliseconds: 4_999)).isEmpty)
            let third = try await claim("w3", at: t1.adding(milliseconds: 5_000), batch: 1)
            #expect(third.map(\.id) == [first.id])
            #expect(third.first?.attempt == 3)
            // The worker dies during the last allowed attempt: the next claim dead-letters it and
            // takes the rest of the queue.
            let t2 = t1.adding(milliseconds: 5_000 + lease)
            let rest = try await claim("w4", at: t2)
            #expect(rest.map(\.id) == claimed.dropFirst().map(\.id))
            let dead = try await store.read { try $0.outboxEntry(id: first.id) }
            #expect(dead?.deadLetteredAt == t2)
            #expect(dead?.lastError == "HTTP 503")
            #expect(dead?.attempts == 3)
            for delivery in rest {
                #expect(try await store.write { try $0.markDelivered(id: delivery.id, lease: delivery.lease, at: t2) })
                #expect(
                    try await store.write { try $0.markDelivered(id: delivery.id, lease: delivery.lease, at: t2) }
                        == false)
                #expect(try await store.read { try $0.outboxEntry(id: delivery.id)?.deliveredAt } == t2)
            }
            if let held = rest.first?.lease { #expect(try await store.write { try $0.releaseDeliveries(held) }) }
            // Listed as failed for its app only; replay puts it back in the queue from attempt 1.
            let failed = try await store.read { try $0.failedDeliveries(appId: F.appId, after: nil, limit: 50) }
            #expect(failed.map(\.id).contains(first.id))
            #expect(
                try await store.read { try $0.failedDeliveries(appId: "another-app", after: nil, limit: 50) }.isEmpty)
            #expect(
                try await store.write { try $0.replayDelivery(id: first.id, appId: "another-app", at: t2) } == false)
            let backlogBefore = try await store.read { try $0.outboxBacklog() }
            #expect(try await store.write { try $0.replayDelivery(id: first.id, appId: F.appId, at: t2) })
            #expect(try await store.write { try $0.replayDelivery(id: first.id, appId: F.appId, at: t2) } == false)
            #expect(try await store.read { try $0.outboxBacklog() }.pending == backlogBefore.pending + 1)
            let replayed = try await claim("w6", at: t2)
            #expect(replayed.map(\.id) == [first.id])
            #expect(replayed.first?.attempt == 1)
            let lease6 = try #require(replayed.first?.lease)
            #expect(try await store.write { try $0.markDelivered(id: first.id, lease: lease6, at: t2) })
            #expect(
                try await store.read { try $0.failedDeliveries(appId: F.appId, after: nil, limit: 50) }.map(\.id)
                    .contains(first.id) == false)
            #expect(try await store.read { try $0.outboxBacklog() }.pending == 0)

            // The same owner claiming again after its own lease expired gets a new generation:
            // what it does under the old one is refused.
            let later = try await store.write { tx in
                let customer = try tx.ensureCustomer(appId: F.appId, appUserId: "fenced", at: t2)
                let events = try tx.appendEvents(
                    [WebhookEvents.event(id: "fenced-1", appUserId: "fenced", at: t2)], customerId: customer.id, at: t2)
                return try tx.enqueueDeliveries(of: events, appId: F.appId, at: t2)
            }
            #expect(later == 1)
            let before = try #require(try await claim("w7", at: t2).first)
            let again = try #require(try await claim("w7", at: t2.adding(milliseconds: lease)).first)
            #expect(again.id == before.id && again.lease.generation == before.lease.generation + 1)
            #expect(
                try await store.write { try $0.markDelivered(id: before.id, lease: before.lease, at: t2) } == false)
            #expect(try await store.write { try $0.markDelivered(id: again.id, lease: again.lease, at: t2) })
        }
    }

    @Test("jobs: dedupe, claim, lease expiry, completion, giving up", arguments: Backend.enabled)
    func jobs(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let t0 = F.at(1)
            let id = try #require(
                try await store.write {
                    try $0.enqueueJob(
                        appId: nil, kind: "reconcile", payload: #"{"o":"1"}"#, runAt: t0, dedupeKey: "reconcile:o1",
                        at: t0)
                })
            #expect(
                try await store.write {
                    try $0.enqueueJob(
                        appId: nil, kind: "reconcile", payload: "{}", runAt: t0, dedupeKey: "reconcile:o1", at: t0)
                } == nil)
            let other = try #require(
                try await store.write {
                    try $0.enqueueJob(
                        appId: nil, kind: "rollup", payload: "{}", runAt: t0.adding(milliseconds: 1_000),
                        dedupeKey: nil, at: t0)
                })
            #expect(
                try await store.write {
                    try $0.claimJobs(kind: "rollup", owner: "w1", now: t0, leaseMilliseconds: 1_000, limit: 10)
                }.isEmpty)
            let claimed = try await store.write {
                try $0.claimJobs(kind: "reconcile", owner: "w1", now: t0, leaseMilliseconds: 1_000, limit: 10)
            }
            #expect(claimed.map(\.id) == [id])
            #expect(claimed.first?.payload == #"{"o":"1"}"#)
            #expect(
                try await store.write {
                    try $0.claimJobs(
                        kind: "reconcile", owner: "w2", now: t0.adding(milliseconds: 999), leaseMilliseconds: 1_000,
                        limit: 10)
                }.isEmpty)
            let again = try await store.write {
                try $0.claimJobs(
                    kind: "reconcile", owner: "w2", now: t0.adding(milliseconds: 1_000), leaseMilliseconds: 1_000,
                    limit: 10)
            }
            #expect(again.first?.attempts == 2)
            #expect(try await store.write { try $0.completeJob(id: id, owner: "w1", at: t0) } == false)
            #expect(
                try await store.write { try $0.completeJob(id: id, owner: "w2", at: t0.adding(milliseconds: 1_500)) })
            let rollup = try await store.write {
                try $0.claimJobs(
                    kind: "rollup", owner: "w3", now: t0.adding(milliseconds: 2_000), leaseMilliseconds: 1_000,
                    limit: 10)
            }
            #expect(rollup.map(\.id) == [other])
            #expect(
                try await store.write {
                    try $0.failJob(
                        id: other, owner: "w3", error: "gave up", retryAt: nil, at: t0.adding(milliseconds: 2_100))
                })
            #expect(
                try await store.write {
                    try $0.claimJobs(
                        kind: "rollup", owner: "w4", now: t0.adding(milliseconds: 99_000), leaseMilliseconds: 1_000,
                        limit: 10)
                }.isEmpty)
            #expect(try await store.read { try $0.job(id: other)?.failedAt } == t0.adding(milliseconds: 2_100))

            // A finished job frees its dedupe key (0010): the key may be queued again, once.
            let requeued = try #require(
                try await store.write {
                    try $0.enqueueJob(
                        appId: nil, kind: "reconcile", payload: "{}", runAt: t0, dedupeKey: "reconcile:o1", at: t0)
                })
            #expect(requeued != id)
            #expect(
                try await store.write {
                    try $0.enqueueJob(
                        appId: nil, kind: "reconcile", payload: "{}", runAt: t0, dedupeKey: "reconcile:o1", at: t0)
                } == nil)
        }
    }
}
