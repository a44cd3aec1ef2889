import AppStoreModels
import Foundation
import Testing

@testable import Entitlements
@testable import Storage
@testable import StorekeeperIngestion

/// The cache's facts without reading the rows (SQLite, migration 0027): while the purchases'
/// stamps show that only the caller's own writes changed them, the facts handed out are the
/// known ones with those writes in their places, and no row is read; every other change
/// (another instance's write, a rewrite this transaction did not record, a rolled-back write,
/// a purchase moved) is seen and the rows are read again. Each step compares the facts handed
/// out with `facts(customerId:)` and counts the reads.
@Suite struct CachedFactStampsTests {
    typealias Suite = CachedEvaluationTests

    @Test func factsFollowTheStampsAndEveryOtherChangeIsRead() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "storekeeper-fact-stamps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let t1 = Fixture.tx("t1", "monthly", 0, 30)
        let t2 = Fixture.tx("t2", "monthly", 30, 60)
        let t3 = Fixture.tx("t3", "monthly", 60, 90)
        let other = Fixture.tx("u1", "monthly", 0, 30, original: "o2")
        let losing = Fixture.ri("monthly", signed: 1, next: "annual")
        let winning = Fixture.ri("monthly", signed: 1, next: "monthly")
        let renewed = Fixture.note(.didRenew, signed: 30)
        let store = try await Suite.open(directory, "stamps", facts: [t1])
        let cache = CustomerEvaluationCache(stampedFactCount: 0)

        /// Inserts `facts`, then hands out the cache's facts and the stored ones (in one
        /// transaction), with how many times the cache read the rows for it.
        func step(
            inserting facts: [Fact], then body: @escaping @Sendable (SQLStoreTransaction) throws -> Void = { _ in }
        ) async throws -> (handed: [Fact], stored: [Fact], reads: Int) {
            let before = cache.scans.load(ordering: .relaxed)
            let (handed, stored) = try await store.write { tx in
                try Suite.insert(facts, in: tx)
                try body(tx as! SQLStoreTransaction)
                return (try cache.facts(customerId: 1, in: tx), try tx.facts(customerId: 1))
            }
            return (handed, stored, cache.scans.load(ordering: .relaxed) - before)
        }

        // The first reading reads the rows; then each insertion of this transaction goes in
        // without: a transaction, a renewal info, a notification, and a renewal info rewritten
        // in place (the greater of two at one instant keeps the row).
        var outcome = try await step(inserting: [t1, losing])
        #expect(outcome.stored == [t1, losing] && outcome.handed == outcome.stored && outcome.reads == 1)
        outcome = try await step(inserting: [renewed, t2])
        #expect(outcome.stored == [t1, t2, losing, renewed] && outcome.handed == outcome.stored)
        #expect(outcome.reads == 0)
        outcome = try await step(inserting: [winning])
        #expect(outcome.stored == [t1, t2, winning, renewed] && outcome.handed == outcome.stored)
        #expect(outcome.reads == 0)
        // Nothing new; a notification's outcome is not a fact: still nothing read.
        outcome = try await step(inserting: []) { tx in
            let id = try #require(try tx.notification(appId: "app", uuid: "n-DID_RENEW-30.0-o1")).id
            #expect(try tx.finishNotification(id: id, outcome: "applied", at: Fixture.day(31)))
        }
        #expect(outcome.handed == outcome.stored && outcome.reads == 0)

        // A write undone by its savepoint leaves nothing to follow: still nothing read.
        outcome = try await step(inserting: []) { tx in
            _ = try? tx.withSavepoint { () throws -> Void in
                try Suite.insert([t3], in: tx)
                throw StoreError(.database, "undone")
            }
        }
        #expect(outcome.stored == [t1, t2, winning, renewed] && outcome.handed == outcome.stored)
        #expect(outcome.reads == 0)
        // Undone, then another write from the same stamp (as a group commit's next ingestion
        // after a failed one): the undone write is forgotten with its savepoint, and the other
        // is followed.
        let other3 = Fixture.tx("t3b", "monthly", 60, 90)
        outcome = try await step(inserting: []) { tx in
            _ = try? tx.withSavepoint { () throws -> Void in
                try Suite.insert([t3], in: tx)
                throw StoreError(.database, "undone")
            }
            try tx.withSavepoint { try Suite.insert([other3], in: tx) }
        }
        #expect(outcome.stored == [t1, t2, other3, winning, renewed] && outcome.handed == outcome.stored)
        #expect(outcome.reads == 0)
        outcome = try await step(inserting: []) { tx in
            let deleted = try tx.execute("DELETE FROM signed_transactions WHERE transaction_id = 't3b'")
            #expect(deleted == 1)
        }
        #expect(outcome.stored == [t1, t2, winning, renewed] && outcome.handed == outcome.stored)
        #expect(outcome.reads == 1)

        // A rewrite this transaction did not record (no stamps read with it): the rows are read.
        guard case .renewalInfo(let losingFact) = losing else { return }
        outcome = try await step(inserting: []) { tx in
            let text = SQLStoreTransaction.jsonText(losingFact)
            let rewritten = try tx.execute("UPDATE signed_renewal_infos SET fact_json = $1", .text(text))
            #expect(rewritten == 1)
        }
        #expect(outcome.stored == [t1, t2, losing, renewed] && outcome.handed == outcome.stored)
        #expect(outcome.reads == 1)

        // A whole transaction rolled back after the cache handed out its insertion: the stamp it
        // left is gone, and the next reading reads the rows.
        _ = try? await store.write { tx -> Int in
            try Suite.insert([t3], in: tx)
            _ = try cache.facts(customerId: 1, in: tx)
            throw StoreError(.database, "rolled back")
        }
        outcome = try await step(inserting: [])
        #expect(outcome.stored == [t1, t2, losing, renewed] && outcome.handed == outcome.stored)
        #expect(outcome.reads == 1)

        // Another instance on the same file inserts: read.
        let second = try await SQLiteStore.open(path: directory.appendingPathComponent("stamps.sqlite").path)
        try await second.write { tx in try Suite.insert([t3], in: tx) }
        await second.close()
        outcome = try await step(inserting: [])
        #expect(outcome.stored == [t1, t2, t3, losing, renewed] && outcome.handed == outcome.stored)
        #expect(outcome.reads == 1)

        // A second purchase of the customer's: without a fact it has no stamp, so the rows are
        // read until its first fact stamps it, and followed after that.
        outcome = try await step(inserting: []) { tx in
            _ = try tx.claimOriginalTransaction("o2", customerId: 1, at: Fixture.day(0))
        }
        #expect(outcome.reads == 1)
        outcome = try await step(inserting: [other])
        #expect(outcome.stored == [t1, t2, t3, other, losing, renewed] && outcome.handed == outcome.stored)
        #expect(outcome.reads == 1)
        let again = Fixture.tx("u2", "monthly", 30, 60, original: "o2")
        outcome = try await step(inserting: [again, Fixture.note(.didRenew, signed: 30, original: "o2")])
        #expect(outcome.handed == outcome.stored && outcome.stored.count == 8 && outcome.reads == 0)
        await store.close()
    }

    /// The stamps on both engines: SQLite's change with each fact row written, whoever writes
    /// it, and not with a notification's outcome; PostgreSQL keeps none.
    @Test func sqliteStampsEachFactWriteAndPostgresKeepsNone() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "storekeeper-fact-stamps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try await Suite.open(directory, "engine", facts: [Fixture.tx("t1", "monthly", 0, 30)])
        func stamps() async throws -> [PurchaseFactStamp]? {
            try await store.read { try $0.factStamps(customerId: 1) }
        }
        // A purchase without facts has no stamp yet.
        #expect(try await stamps() == nil)
        try await store.write { tx in try Suite.insert([Fixture.tx("t1", "monthly", 0, 30)], in: tx) }
        let first = try #require(try await stamps())
        #expect(first.map(\.purchaseId) == ["o1"] && first.map(\.appId) == ["app"])
        try await store.write { tx in try Suite.insert([Fixture.note(.didRenew, signed: 30)], in: tx) }
        let second = try #require(try await stamps())
        #expect(second != first)
        try await store.write { tx in
            let id = try #require(try tx.notification(appId: "app", uuid: "n-DID_RENEW-30.0-o1")).id
            _ = try tx.finishNotification(id: id, outcome: "applied", at: Fixture.day(31))
        }
        #expect(try await stamps() == second)
        try await store.write { tx in
            let deleted = try (tx as! SQLStoreTransaction).execute("DELETE FROM notifications")
            #expect(deleted == 1)
        }
        #expect(try await stamps() != second)
        await store.close()

        guard let url = ProcessInfo.processInfo.environment["STOREKEEPER_TEST_POSTGRES_URL"] else { return }
        let postgres = try await PostgresStore.open(url: url)
        let none = try await postgres.read { try $0.factStamps(customerId: 1) }
        #expect(none == nil)
        await postgres.close()
    }
}
