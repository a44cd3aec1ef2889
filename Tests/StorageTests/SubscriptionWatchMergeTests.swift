import AppStoreModels
import Foundation
import Testing

@testable import Storage
@testable import StorekeeperIngestion

/// `FactCommitter.merged`: one upsert of `subscription_watch` per subscription must leave the
/// row that the batch's updates leave when applied one by one.
@Suite struct SubscriptionWatchMergeTests {
    typealias Seeded = AnalyticsIndependentComputationTests.Seeded

    static func update(_ id: String, _ random: inout Seeded) -> SubscriptionWatchUpdate {
        // Few distinct instants, so equal ones (the tie rules) come up often.
        func instant() -> Timestamp { Timestamp(millisecondsSince1970: Int64.random(in: 1...4, using: &random)) }
        let renewal = Bool.random(using: &random)
        return SubscriptionWatchUpdate(
            appId: IngestionFixture.appId, environment: .sandbox, originalTransactionId: id,
            expiresAt: renewal ? nil : instant(), renewalSignedAt: renewal ? instant() : nil,
            billingRetry: renewal ? Bool.random(using: &random) : nil, factAt: instant())
    }

    static func named(_ updates: [SubscriptionWatchUpdate], _ id: String) -> [SubscriptionWatchUpdate] {
        updates.map {
            var update = $0
            update.originalTransactionId = id
            return update
        }
    }

    @Test func updatesOfOneSubscriptionBecomeOneAndOthersKeepTheirOrder() {
        let at = Timestamp(millisecondsSince1970: 5)
        func watch(_ id: String, expires: Int64? = nil, renewal: Int64? = nil, retry: Bool? = nil)
            -> SubscriptionWatchUpdate
        {
            SubscriptionWatchUpdate(
                appId: "app", environment: .sandbox, originalTransactionId: id,
                expiresAt: expires.map(Timestamp.init(millisecondsSince1970:)),
                renewalSignedAt: renewal.map(Timestamp.init(millisecondsSince1970:)), billingRetry: retry, factAt: at)
        }
        #expect(
            FactCommitter.merged([watch("b", expires: 9), watch("a", expires: 3), watch("b", renewal: 2, retry: true)])
                == [watch("b", expires: 9, renewal: 2, retry: true), watch("a", expires: 3)])
    }

    @Test("merged updates leave the row that applying them in turn leaves", arguments: Backend.enabled)
    func mergedEqualsInTurn(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await IngestionFixture.setUp(store)
            var random = Seeded(state: 24)
            for trial in 0..<150 {
                let prior = Bool.random(using: &random) ? [Self.update("", &random)] : []
                let batch = (0..<Int.random(in: 2...4, using: &random)).map { _ in Self.update("", &random) }
                let merged = FactCommitter.merged(Self.named(batch, "merged-\(trial)"))
                #expect(merged.count == 1)
                try await store.write { tx in
                    for update in Self.named(prior, "turn-\(trial)") + Self.named(batch, "turn-\(trial)") {
                        try tx.watchSubscription(update)
                    }
                    for update in Self.named(prior, "merged-\(trial)") + merged { try tx.watchSubscription(update) }
                }
            }
            let rows = try await store.read { reader in
                try reader.sql(
                    """
                    SELECT original_transaction_id, expires_at, billing_retry, renewal_signed_at, last_fact_at
                    FROM subscription_watch ORDER BY original_transaction_id
                    """
                ).map { row in
                    (
                        try row.text(0),
                        [try row.optionalText(1), String(try row.integer(2)), try row.optionalText(3), try row.text(4)]
                    )
                }
            }
            let byId = Dictionary(uniqueKeysWithValues: rows)
            #expect(byId.count == 300)
            for trial in 0..<150 {
                #expect(byId["merged-\(trial)"] == byId["turn-\(trial)"], "trial \(trial)")
            }
        }
    }
}
