import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// How a customer's facts are read in one statement (`SQLStoreTransaction.factJSON`), and the
/// planner statistics a bulk load refreshes.
extension StoreConformanceTests {
    /// A fact this transaction inserted reads back as the fact itself (not decoded again from
    /// the text just encoded from it), equal to that text decoded; facts of a rolled-back
    /// savepoint are forgotten, so a row that takes one of their ids (SQLite reuses them) is
    /// decoded from what it holds.
    @Test(
        "facts a transaction inserts read back as themselves, equal to their text decoded; a rolled-back savepoint's are forgotten",
        arguments: Backend.enabled)
    func insertedFactsReadBackAsInserted(backend: Backend) async throws {
        let (replacement, discarded) = {
            var replacement = ColumnJSONTests.fullTransaction
            replacement.transactionId = "replacement"
            replacement.productId = "other-product"
            var discarded = ColumnJSONTests.fullTransaction
            discarded.transactionId = "discarded"
            return (replacement, discarded)
        }()
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let summary = try await store.write { tx -> (inserted: Int, rows: Int, replaced: Fact?, renewal: Fact?) in
                let customer = try tx.ensureCustomer(appId: F.appId, appUserId: "inserted", at: F.at(0))
                for original in ["o", "o/1"] {
                    _ = try tx.claimOriginalTransaction(original, customerId: customer.id, at: F.at(0))
                }
                for fact in Self.storableSamples { try Self.insert(fact, in: tx) }
                // A renewal info rewritten in place: by a single insert that wins (the row then
                // holds its fact), one that loses (it keeps the winner's), then a bulk insert
                // that wins (which registers nothing: the row's text is no longer the one
                // registered, so it is decoded).
                for (productId, bulk) in [("z-wins", false), ("a-loses", false), ("zz-bulk-wins", true)] {
                    let renewal = NewRenewalInfo(
                        appId: F.appId, jws: nil,
                        fact: RenewalFact(
                            originalTransactionId: "o/1", productId: productId, signedDate: F.at(7),
                            environment: .sandbox),
                        source: "test", receivedAt: F.now)
                    if bulk {
                        _ = try tx.insertRenewalInfos([renewal])
                    } else {
                        _ = try tx.insertRenewalInfo(renewal)
                    }
                }
                var inserted = 0
                for row in try tx.factJSON(customerId: customer.id) {
                    if row.inserted != nil { inserted += 1 }
                    #expect(try row.decode() == FactJSON(kind: row.kind, json: row.json).decode())
                }
                // A savepoint inserts one more and rolls back; a bulk insert (which registers
                // nothing) then stores another, on SQLite under the same row id.
                _ = try? tx.withSavepoint {
                    try Self.insert(.transaction(discarded), in: tx)
                    throw StoreError(.database, "rolled back on purpose")
                }
                _ = try tx.insertTransactions([
                    NewTransaction(appId: F.appId, jws: nil, fact: replacement, source: "test", receivedAt: F.now)
                ])
                let rows = try tx.factJSON(customerId: customer.id)
                let replaced = try rows.first { $0.json.contains("\"replacement\"") }?.decode()
                let renewal = try rows.first { $0.json.contains("-wins\"") }?.decode()
                return (inserted, rows.count, replaced, renewal)
            }
            // The samples, not the rewritten renewal info (its text is the bulk insert's).
            #expect(summary.inserted == Self.storableSamples.count)
            #expect(summary.rows == Self.storableSamples.count + 2)
            #expect(summary.replaced == .transaction(replacement))
            #expect(
                summary.renewal
                    == .renewalInfo(
                        RenewalFact(
                            originalTransactionId: "o/1", productId: "zz-bulk-wins", signedDate: F.at(7),
                            environment: .sandbox)))
        }
    }

    /// The column samples without the NUL in the full transaction's id (PostgreSQL refuses it
    /// in a column; its JSON escapes it).
    static let storableSamples: [Fact] = ColumnJSONTests.sampleFacts.map { fact in
        guard case .transaction(var transaction) = fact else { return fact }
        transaction.transactionId = transaction.transactionId.replacingOccurrences(of: "\u{0}", with: "")
        return .transaction(transaction)
    }

    /// A NUL in a text value: both engines took it as a C string and cut the value there, so
    /// two ids that differ after it were one (the second a silent duplicate); PostgreSQL's text
    /// cannot hold one at all. Such a value is refused, on both, with a clear error, and
    /// nothing of the write is kept.
    @Test("a text value with a NUL is refused on both engines, never cut short", arguments: Backend.enabled)
    func nulInTextValues(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            var refused: StoreError?
            do {
                try await store.write { tx in
                    let customer = try tx.ensureCustomer(appId: F.appId, appUserId: "nul", at: F.at(0))
                    _ = try tx.claimOriginalTransaction("o-nul", customerId: customer.id, at: F.at(0))
                    for id in ["a\u{0}b", "a\u{0}c"] {
                        let fact = TransactionFact(
                            transactionId: id, originalTransactionId: "o-nul", productId: "p", purchaseDate: F.at(1),
                            signedDate: F.at(1), environment: .production)
                        _ = try Self.insertTransaction(fact, in: tx)
                    }
                }
            } catch let error as StoreError {
                refused = error
            }
            #expect(refused?.code == .unstorableValue)
            #expect(refused?.detail.contains("NUL") == true)
            let kept = try await store.read { reader in try reader.customer(appId: F.appId, .appUserId("nul")) }
            #expect(kept == nil)
        }
    }

    static func insertTransaction(_ fact: TransactionFact, in tx: any StoreTransaction) throws -> Insertion {
        try tx.insertTransaction(
            NewTransaction(appId: F.appId, jws: nil, fact: fact, source: "test", receivedAt: F.now))
    }

    static func insert(_ fact: Fact, in tx: any StoreTransaction) throws {
        switch fact {
        case .transaction(let value):
            _ = try tx.insertTransaction(
                NewTransaction(appId: F.appId, jws: nil, fact: value, source: "test", receivedAt: F.now))
        case .renewalInfo(let value):
            _ = try tx.insertRenewalInfo(
                NewRenewalInfo(appId: F.appId, jws: nil, fact: value, source: "test", receivedAt: F.now))
        case .notification(let value):
            _ = try tx.insertNotification(
                NewNotification(
                    appId: F.appId, notificationUUID: value.notificationId, type: value.type, subtype: value.subtype,
                    environment: value.environment, originalTransactionId: value.originalTransactionId,
                    signedDate: value.signedDate, signedPayload: "test", fact: value, receivedAt: F.now))
        default:
            Issue.record("App Store facts only")
        }
    }

    @Test(
        "a customer's facts come back by table, then in the order they were stored, across purchases",
        arguments: Backend.enabled)
    func customerFactsInStoredOrder(backend: Backend) async throws {
        func buyer(_ notification: F.Notification) -> F.Notification {
            var notification = notification
            notification.appUserId = "buyer"
            return notification
        }
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let other = AppRecord(id: "other-app", bundleId: "com.example.other", environments: [.production])
            _ = try await store.write { try $0.saveApp(other, at: F.at(0)) }
            // Two purchases of one customer, stored interleaved (row ids alternate between them),
            // and a third purchase owned by someone else and shared with the customer.
            let first = F.notifications(customers: 1, perCustomer: 4, prefix: "first").map { buyer($0) }
            let second = F.notifications(customers: 1, perCustomer: 2, prefix: "second").map { buyer($0) }
            let shared = F.notifications(customers: 1, perCustomer: 2, prefix: "shared")
            let order = [first[0], second[0], shared[0], first[1], second[1], first[2], shared[1], first[3]]
            let snapshots = [Self.playSnapshot(read: 2), Self.playSnapshot(read: 1, order: "GPA.0")]
            for notification in order { try await F.ingest(notification, into: store) }
            let (buyer, owner) = try await store.write { tx in
                let buyer = try #require(try tx.customer(appId: F.appId, .appUserId("buyer")))
                let owner = try #require(try tx.customer(appId: F.appId, .appUserId(shared[0].appUserId)))
                #expect(
                    try tx.sharePurchase(shared[0].transaction.originalTransactionId, customerId: buyer.id, at: F.at(9))
                )
                // A purchase both owned and shared counts once.
                #expect(
                    try tx.sharePurchase(first[0].transaction.originalTransactionId, customerId: buyer.id, at: F.at(9)))
                // Another app's rows under the same original transaction id are not the buyer's.
                #expect(
                    try tx.insertTransaction(
                        NewTransaction(
                            appId: other.id, jws: "jws.other", fact: first[0].transaction, source: "notification",
                            receivedAt: F.now)) != .duplicate)
                // A notification without a fact (one about nobody's state) is not a fact.
                #expect(
                    try tx.insertNotification(
                        NewNotification(
                            appId: F.appId, notificationUUID: "no-fact", type: "TEST", subtype: nil,
                            environment: .production, originalTransactionId: first[0].transaction.originalTransactionId,
                            signedDate: F.at(10), signedPayload: "jws.no-fact", fact: nil, receivedAt: F.now))
                        != .duplicate)
                // Google Play snapshots of a token the buyer owns come after the App Store facts.
                _ = try tx.claimOriginalTransaction("tok-1", customerId: buyer.id, at: F.at(10))
                for snapshot in snapshots { #expect(try tx.insertPlayFact(snapshot) != .duplicate) }
                return (buyer, owner)
            }
            let expected =
                order.map { Fact.transaction($0.transaction) } + order.compactMap { $0.renewal.map(Fact.renewalInfo) }
                + order.map { Fact.notification($0.notificationFact) } + snapshots.map(\.fact)
            let (facts, texts, ownerFacts) = try await store.read { reader in
                (
                    try reader.facts(customerId: buyer.id),
                    try reader.factJSON(customerId: buyer.id).map { try $0.decode() },
                    try reader.facts(customerId: owner.id)
                )
            }
            #expect(facts == expected)
            #expect(texts == expected)
            #expect(
                ownerFacts
                    == shared.map { Fact.transaction($0.transaction) }
                    + shared.compactMap { $0.renewal.map(Fact.renewalInfo) }
                    + shared.map { Fact.notification($0.notificationFact) })
        }
    }

    @Test(
        "refreshing the planner's statistics analyzes the tables (PostgreSQL) and changes nothing else",
        arguments: Backend.enabled)
    func plannerStatisticsRefreshed(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            for notification in F.notifications(customers: 3, perCustomer: 2) {
                try await F.ingest(notification, into: store)
            }
            let before = try await F.snapshot(store)
            try await store.write { try $0.refreshPlannerStatistics() }
            #expect(try await F.snapshot(store) == before)
            switch backend {
            case .sqlite:
                // Never analyzed: SQLite plans these queries without statistics.
                #expect(
                    try await store.read {
                        try $0.sql("SELECT COUNT(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'")
                    }[0]
                    .integer(0) == 0)
            case .postgres:
                // A table never analyzed has reltuples -1; ANALYZE counts its rows.
                let tuples = try await store.read {
                    try $0.sql(
                        """
                        SELECT relname, reltuples::bigint FROM pg_class
                        WHERE relname IN ('notifications', 'signed_transactions', 'signed_renewal_infos')
                          AND relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
                        ORDER BY relname
                        """
                    ).map { [try $0.text(0), String(try $0.integer(1))] }
                }
                #expect(
                    tuples == [["notifications", "6"], ["signed_renewal_infos", "6"], ["signed_transactions", "6"]])
            }
        }
    }
}
