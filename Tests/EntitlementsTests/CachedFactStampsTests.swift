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
        let directory = try Suite.temporaryDirectory("fact-stamps")
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

        // A second purchase of the customer's: read once (the known stamps lack it), when it is
        // stamped too, then followed from its first fact on.
        outcome = try await step(inserting: []) { tx in
            _ = try tx.claimOriginalTransaction("o2", customerId: 1, at: Fixture.day(0))
        }
        #expect(outcome.reads == 1)
        outcome = try await step(inserting: [other])
        #expect(outcome.stored == [t1, t2, t3, other, losing, renewed] && outcome.handed == outcome.stored)
        #expect(outcome.reads == 0)
        let again = Fixture.tx("u2", "monthly", 30, 60, original: "o2")
        outcome = try await step(inserting: [again, Fixture.note(.didRenew, signed: 30, original: "o2")])
        #expect(outcome.handed == outcome.stored && outcome.stored.count == 8 && outcome.reads == 0)
        await store.close()
    }

    /// The stamps on both engines: on SQLite a purchase has none until `stampFacts` gives it
    /// one (a fact written before costs nothing), then each fact row written replaces it,
    /// whoever writes it, and a notification's outcome does not; PostgreSQL keeps none.
    @Test func sqliteStampsEachFactWriteAndPostgresKeepsNone() async throws {
        let directory = try Suite.temporaryDirectory("fact-stamps")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try await Suite.open(directory, "engine", facts: [Fixture.tx("t1", "monthly", 0, 30)])
        func stamps() async throws -> [PurchaseFactStamp]? {
            try await store.read { try $0.factStamps(customerId: 1) }
        }
        #expect(try await stamps() == nil)
        try await store.write { tx in try Suite.insert([Fixture.tx("t1", "monthly", 0, 30)], in: tx) }
        #expect(try await stamps() == nil)
        let first = try #require(try await store.write { try $0.stampFacts(customerId: 1) })
        #expect(first.map(\.purchaseId) == ["o1"] && first.map(\.appId) == ["app"])
        #expect(try await stamps() == first)
        // Stamping again keeps the stamps there are.
        #expect(try await store.write { try $0.stampFacts(customerId: 1) } == first)
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
        let third = try #require(try await stamps())
        #expect(third != second)
        // Another purchase of the app, not stamped: its facts stamp nothing.
        try await store.write { tx in try Suite.insert([Fixture.tx("u1", "monthly", 0, 30, original: "o2")], in: tx) }
        let unstamped = try await store.read { reader in
            try (reader as! SQLStoreTransaction).connection.query(
                "SELECT purchase_id FROM purchase_fact_stamps ORDER BY purchase_id", [])
        }
        #expect(try unstamped.map { try $0.text(0) } == ["o1"])
        #expect(try await stamps() == third)
        await store.close()

        guard let url = ProcessInfo.processInfo.environment["STOREKEEPER_TEST_POSTGRES_URL"] else { return }
        let postgres = try await PostgresStore.open(url: url)
        let none = try await postgres.read { try $0.factStamps(customerId: 1) }
        #expect(none == nil)
        await postgres.close()
    }

    /// Migration 0028 on a database 0027 stamped: the stamps there are stay and follow their
    /// purchases' facts; a purchase 0027 never stamped gets none from its facts any more.
    @Test func stampsGivenBy0027StayAndFollowTheirFacts() async throws {
        let directory = try Suite.temporaryDirectory("fact-stamps")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("migrated.sqlite").path
        let connection = try SQLiteConnection(path: path, readOnly: false, busyTimeoutMilliseconds: 5_000)
        try Migrator.migrate(
            connection, migrations: Array(Migration.all.prefix { $0.identifier != "0028_lazy_fact_stamps" }),
            apply: true)
        try connection.executeScript("BEGIN")
        try {
            let tx = SQLStoreTransaction(connection: connection)
            try tx.saveApp(
                AppRecord(id: "app", bundleId: "com.example", environments: [.production]), at: Fixture.day(0))
            try Suite.insert([Fixture.tx("t1", "monthly", 0, 30)], in: tx)
        }()
        try connection.commit()
        connection.close()

        let store = try await SQLiteStore.open(path: path)
        func stamps() async throws -> [String: Int64] {
            try await store.read { reader in
                let rows = try (reader as! SQLStoreTransaction).connection.query(
                    "SELECT purchase_id, stamp FROM purchase_fact_stamps", [])
                return Dictionary(uniqueKeysWithValues: try rows.map { (try $0.text(0), try $0.integer(1)) })
            }
        }
        let before = try await stamps()
        #expect(Array(before.keys) == ["o1"])
        try await store.write { tx in
            try Suite.insert(
                [Fixture.tx("t2", "monthly", 30, 60), Fixture.tx("u1", "monthly", 0, 30, original: "o2")], in: tx)
        }
        let after = try await stamps()
        #expect(Array(after.keys) == ["o1"] && after["o1"] != before["o1"])
        await store.close()
    }
}
