import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// `ensureCustomers` / `claimOriginalTransactions` against `ensureCustomer` /
/// `claimOriginalTransaction` called one by one in the same order.
extension StoreConformanceTests {
    /// One import step: customers ensured, then originals claimed by index into those customers.
    struct CustomerBatch: Sendable {
        var appId: String
        var appUserIds: [String]
        var claims: [(original: String, customer: Int)]
        var at: Timestamp
    }

    /// What a batch gave back, by app user id (the engines number customers in the order they
    /// are created, which the bulk upsert sorts).
    struct CustomerBatchOutcome: Equatable {
        var customers: [String]
        var previousOwners: [String?]
    }

    static let bulkCustomerApp = "app-2"

    static func customerBatches() -> [CustomerBatch] {
        let many = (0..<1_300).map { "user-\($0)" }
        return [
            CustomerBatch(
                appId: F.appId, appUserIds: ["c1", "c2"], claims: [("o1", 0), ("o2", 1)], at: F.at(1)),
            CustomerBatch(appId: F.appId, appUserIds: ["c2"], claims: [], at: F.at(9)),
            // c3 twice; c1 seen later, c2 earlier than it was; claims: new, own, moved from c2,
            // new, a repeated original moved on within the batch, new, own again.
            CustomerBatch(
                appId: F.appId, appUserIds: ["c3", "c1", "c2", "c3", "c4"],
                claims: [("o3", 0), ("o1", 1), ("o2", 3), ("o4", 4), ("o4", 0), ("o5", 1), ("o3", 3)],
                at: F.at(5)),
            // Another app: the same user id and original are other rows.
            CustomerBatch(
                appId: bulkCustomerApp, appUserIds: ["c1", "c9"], claims: [("o1", 1), ("o2", 0)], at: F.at(6)),
            CustomerBatch(appId: F.appId, appUserIds: [], claims: [], at: F.at(7)),
            // Past the most rows one statement carries (512 + 512 + 256 + 16 + 4), given in
            // reverse order; every tenth claims an original owned by the customer before it.
            CustomerBatch(
                appId: F.appId, appUserIds: many.reversed(),
                claims: (0..<1_300).map { ("many-o\($0 - $0 % 10)", $0) }, at: F.at(8)),
        ]
    }

    /// Runs the batches one row at a time or in bulk; returns what each gave back and the
    /// customers and claims stored, by app user id.
    static func runCustomerBatches(_ store: any Store, bulk: Bool) async throws -> (
        outcomes: [CustomerBatchOutcome], customers: [[SQLValue]], claims: [[SQLValue]]
    ) {
        try await F.setUp(store)
        _ = try await store.write { tx in
            try tx.saveApp(
                AppRecord(id: bulkCustomerApp, bundleId: "com.example.two", environments: [.production]), at: F.at(0))
        }
        var outcomes: [CustomerBatchOutcome] = []
        for batch in customerBatches() {
            let outcome = try await store.write { tx in
                let ids: [Int64]
                let previous: [Int64?]
                if bulk {
                    ids = try tx.ensureCustomers(appId: batch.appId, appUserIds: batch.appUserIds, at: batch.at)
                    previous = try tx.claimOriginalTransactions(
                        batch.claims.map { (originalTransactionId: $0.original, customerId: ids[$0.customer]) },
                        at: batch.at)
                } else {
                    ids = try batch.appUserIds.map {
                        try tx.ensureCustomer(appId: batch.appId, appUserId: $0, at: batch.at).id
                    }
                    previous = try batch.claims.map {
                        try tx.claimOriginalTransaction($0.original, customerId: ids[$0.customer], at: batch.at)
                    }
                }
                let name = { (id: Int64) in try tx.customer(id: id)?.appUserId ?? "?" }
                return CustomerBatchOutcome(
                    customers: try ids.map(name), previousOwners: try previous.map { try $0.map(name) })
            }
            outcomes.append(outcome)
        }
        let given = outcomes
        return try await store.read { reader in
            (
                given,
                try reader.sql(
                    "SELECT app_id, app_user_id, first_seen_at, last_seen_at FROM customers ORDER BY app_id, app_user_id"
                ).map(\.values),
                try reader.sql(
                    """
                    SELECT ct.app_id, ct.original_transaction_id, c.app_user_id, ct.claimed_at
                    FROM customer_transactions ct JOIN customers c ON c.id = ct.customer_id
                    ORDER BY ct.app_id, ct.original_transaction_id
                    """
                ).map(\.values)
            )
        }
    }

    @Test("bulk customers and claims give and store what one-by-one calls do", arguments: Backend.enabled)
    func bulkCustomersMatchSingleCalls(backend: Backend) async throws {
        var single: (outcomes: [CustomerBatchOutcome], customers: [[SQLValue]], claims: [[SQLValue]])?
        try await withStore(backend) { store, _ in single = try await Self.runCustomerBatches(store, bulk: false) }
        try await withStore(backend) { store, _ in
            let bulk = try await Self.runCustomerBatches(store, bulk: true)
            #expect(bulk.outcomes == single?.outcomes)
            #expect(bulk.customers == single?.customers)
            #expect(bulk.claims == single?.claims)
            // The third batch, spelled out.
            #expect(bulk.outcomes[2].customers == ["c3", "c1", "c2", "c3", "c4"])
            #expect(bulk.outcomes[2].previousOwners == [nil, nil, "c2", nil, "c4", nil, nil])
            #expect(bulk.outcomes[3].previousOwners == [nil, nil])
            let c = { (app: String, user: String) in
                bulk.customers.first { $0[0] == .text(app) && $0[1] == .text(user) }
            }
            // First seen when created; last seen moves forward only.
            #expect(c(F.appId, "c1") == [.text(F.appId), .text("c1"), SQLValue(F.at(1)), SQLValue(F.at(5))])
            #expect(c(F.appId, "c2") == [.text(F.appId), .text("c2"), SQLValue(F.at(1)), SQLValue(F.at(9))])
            #expect(
                c(Self.bulkCustomerApp, "c1") == [
                    .text(Self.bulkCustomerApp), .text("c1"), SQLValue(F.at(6)), SQLValue(F.at(6)),
                ])
            #expect(bulk.customers.count == 4 + 2 + 1_300)
            let claim = { (app: String, original: String) in
                bulk.claims.first { $0[0] == .text(app) && $0[1] == .text(original) }?[2]
            }
            #expect(claim(F.appId, "o2") == .text("c3"))
            #expect(claim(F.appId, "o4") == .text("c3"))
            #expect(claim(Self.bulkCustomerApp, "o1") == .text("c9"))
            #expect(claim(F.appId, "many-o1290") == .text("user-0"))
            #expect(claim(F.appId, "many-o0") == .text("user-1290"))
            #expect(bulk.outcomes[5].previousOwners.compactMap { $0 }.count == 1_170)
        }
    }

    @Test("a bulk claim for a customer that does not exist fails as a single claim does", arguments: Backend.enabled)
    func bulkClaimOfUnknownCustomerFails(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let error = await #expect(throws: StoreError.self) {
                try await store.write { tx in
                    let ids = try tx.ensureCustomers(appId: F.appId, appUserIds: ["ann"], at: F.now)
                    try tx.claimOriginalTransactions(
                        [
                            (originalTransactionId: "o1", customerId: ids[0]),
                            (originalTransactionId: "o2", customerId: -1),
                        ],
                        at: F.now)
                }
            }
            #expect(error?.code == .notFound)
            // All or nothing: the transaction rolled back.
            #expect(try await store.read { try $0.count("customers") } == 0)
        }
    }
}
