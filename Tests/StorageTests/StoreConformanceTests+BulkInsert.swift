import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// `insertTransactions` / `insertRenewalInfos` against their single-row counterparts.
extension StoreConformanceTests {
    /// Every column but the row id, in insertion order.
    static func rows(_ table: String, in store: any Store) async throws -> [[SQLValue]] {
        try await store.read { reader in
            try reader.sql(
                """
                SELECT app_id, environment, original_transaction_id, product_id, signed_date, jws, source, fact_json,
                       received_at \(table == "signed_transactions" ? ", transaction_id" : "")
                FROM \(table) ORDER BY id
                """
            ).map(\.values)
        }
    }

    @Test(
        "bulk inserts store exactly what single-row inserts store; duplicates are skipped", arguments: Backend.enabled)
    func bulkInsertsMatchSingleRows(backend: Backend) async throws {
        // 2,000 transaction versions (some are refunds re-signing a transaction): three full
        // statements and a tail of several powers of two, far past SQLite's limit on bound values
        // if sent in one statement.
        let notifications = F.notifications(customers: 200, perCustomer: 10)
        let transactions = notifications.map {
            NewTransaction(
                appId: F.appId, jws: "jws.\($0.uuid)", fact: $0.transaction, source: "import", receivedAt: F.now)
        }
        let renewals = notifications.compactMap(\.renewal).map {
            NewRenewalInfo(appId: F.appId, jws: nil, fact: $0, source: "import", receivedAt: F.now)
        }
        #expect(transactions.count == 2_000)
        // The first 700 come again in the same batch, and the whole batch comes twice.
        let batch = transactions + transactions.prefix(700)
        let renewalBatch = renewals + renewals.prefix(300)

        var single: [[SQLValue]] = []
        var singleRenewals: [[SQLValue]] = []
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let (inserted, renewalsInserted) = try await store.write { tx in
                (
                    try batch.filter { !(try tx.insertTransaction($0).isDuplicate) }.count,
                    try renewalBatch.filter { !(try tx.insertRenewalInfo($0).isDuplicate) }.count
                )
            }
            #expect(inserted == transactions.count)
            #expect(renewalsInserted == renewals.count)
            single = try await Self.rows("signed_transactions", in: store)
            singleRenewals = try await Self.rows("signed_renewal_infos", in: store)
        }

        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let counts = try await store.write { tx in
                [
                    try tx.insertTransactions([]),
                    try tx.insertTransactions(batch), try tx.insertTransactions(batch),
                    try tx.insertRenewalInfos(renewalBatch), try tx.insertRenewalInfos(renewalBatch),
                ]
            }
            #expect(counts == [0, transactions.count, 0, renewals.count, 0])
            #expect(try await Self.rows("signed_transactions", in: store) == single)
            #expect(try await Self.rows("signed_renewal_infos", in: store) == singleRenewals)

            // A batch of stored and new rows counts only the new ones; the facts read back whole.
            let extra = F.notifications(customers: 3, perCustomer: 2, prefix: "extra").map {
                NewTransaction(
                    appId: F.appId, jws: nil, fact: $0.transaction, source: "api", receivedAt: F.now)
            }
            #expect(try await store.write { try $0.insertTransactions(Array(transactions.suffix(5)) + extra) } == 6)
            #expect(try await store.read { try $0.count("signed_transactions") } == Int64(transactions.count + 6))
            let owner = notifications[0]
            let facts = try await store.write { tx in
                let customer = try tx.ensureCustomer(appId: F.appId, appUserId: owner.appUserId, at: F.now)
                try tx.claimOriginalTransaction(
                    owner.transaction.originalTransactionId, customerId: customer.id, at: F.now)
                return try tx.facts(customerId: customer.id)
            }
            let own = notifications.filter { $0.appUserId == owner.appUserId }
            #expect(
                facts == own.map { .transaction($0.transaction) } + own.compactMap(\.renewal).map { .renewalInfo($0) })
        }
    }

    @Test("bulk statements bind at most SQLite's limit of values and cache few statement texts")
    func bulkStatementShapes() {
        let text = SQLStoreTransaction.multiRowStatement(
            "INSERT INTO t (a, b)", suffix: "ON CONFLICT (a) DO NOTHING", width: 2, rows: 3)
        #expect(text == "INSERT INTO t (a, b)\nVALUES ($1, $2), ($3, $4), ($5, $6)\nON CONFLICT (a) DO NOTHING")
        #expect(10 * SQLStoreTransaction.maximumRowsPerStatement <= 32_766)
    }
}
