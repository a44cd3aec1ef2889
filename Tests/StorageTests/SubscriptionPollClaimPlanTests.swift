import AppStoreModels
import Entitlements
import StorekeeperTesting
import Testing

@testable import Storage

/// The status-polling claim walks one app's watched subscriptions that can be due in expiry order
/// and stops at its batch (migrations 0033, 0036): it never sorts the app's whole watch list, nor
/// walks the lapsed ones. Before, SQLite (no
/// statistics) searched the primary key's app prefix and sorted every row of the app in a
/// temporary B-tree under the write lock, and PostgreSQL walked an index of every app's expiries.
@Suite struct SubscriptionPollClaimPlanTests {
    typealias F = IngestionFixture
    static let day: Int64 = 86_400_000

    @Test(arguments: Backend.enabled)
    func claimWalksTheDueIndexInExpiryOrder(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let other = AppRecord(id: "app-2", bundleId: "com.example.other", environments: [.production])
            // 3,000 watched subscriptions in each of two apps, expiring over 300 days, none heard
            // of since day 0: at day 400 every one is overdue. Before them in expiry order, 3,000
            // lapsed ones of each app, polled after their expiry: never due again, and never
            // walked (`subscription_watch_pollable` leaves them out; found by review: a walk of
            // all of them cost more than the sort it replaced).
            try await store.write { tx in
                try tx.saveApp(other, at: F.at(0))
                for appId in [F.appId, other.id] {
                    for n in 0..<3_000 {
                        try tx.watchSubscription(
                            SubscriptionWatchUpdate(
                                appId: appId, environment: .production, originalTransactionId: "w\(n)",
                                expiresAt: F.at(Int64(n % 300) + 1), factAt: F.at(0)))
                        try tx.watchSubscription(
                            SubscriptionWatchUpdate(
                                appId: appId, environment: .production, originalTransactionId: "lapsed-\(n)",
                                expiresAt: F.at(-Int64(n % 300) - 1), factAt: F.at(-400)))
                    }
                }
                _ = try tx.sql(
                    "UPDATE subscription_watch SET last_polled_at = $1 WHERE original_transaction_id LIKE 'lapsed-%'",
                    SQLValue(F.at(0)))
                try tx.refreshPlannerStatistics()
            }
            let now = F.at(400)
            let rules = SubscriptionPollRules(
                expiryDelayMilliseconds: 3_600_000, billingRetryIntervalMilliseconds: Self.day,
                staleAfterMilliseconds: 7 * Self.day)
            let arguments: [SQLValue] = [
                .text("owner"), SQLValue(now.adding(milliseconds: 60_000)), .text(F.appId),
                .text(AppStoreEnvironment.production.rawValue), SQLValue(now),
                SQLValue(now.adding(milliseconds: -rules.expiryDelayMilliseconds)),
                SQLValue(now.adding(milliseconds: -rules.billingRetryIntervalMilliseconds)),
                SQLValue(now.adding(milliseconds: -rules.staleAfterMilliseconds)), .integer(45),
            ]
            let text = try await store.read { reader in
                try reader.queryPlan(
                    backend == .postgres
                        ? SQLStoreTransaction.subscriptionPollClaimPostgres
                        : SQLStoreTransaction.subscriptionPollClaimSQLite,
                    arguments)
            }
            #expect(text.contains("subscription_watch_pollable"), "\(text)")
            #expect(!text.contains("subscription_watch_due"), "\(text)")
            #expect(!text.contains("subscription_watch_expires"), "\(text)")
            // No sort of the app's rows: SQLite's temporary B-tree, PostgreSQL's Sort or
            // Incremental Sort node.
            #expect(!text.contains("TEMP B-TREE"), "\(text)")
            #expect(!text.contains("Sort"), "\(text)")

            // What the plan claims: the 45 earliest expiries of this app (ten a day: days 1 to 4,
            // then the first five of day 5 by transaction id).
            let claimed = try await store.write { tx in
                try tx.claimSubscriptionPolls(
                    appId: F.appId, environment: .production, rules: rules, owner: "owner", now: now,
                    leaseMilliseconds: 60_000, limit: 45)
            }
            var watched: [(expires: Int64, id: String)] = []
            for n in 0..<3_000 { watched.append((Int64(n % 300) + 1, "w\(n)")) }
            watched.sort { $0.expires != $1.expires ? $0.expires < $1.expires : $0.id < $1.id }
            let expected = watched.prefix(45)
            #expect(claimed.map(\.appId) == Array(repeating: F.appId, count: 45))
            #expect(claimed.map(\.originalTransactionId) == expected.map(\.id).sorted())
            #expect(Set(claimed.compactMap(\.expiresAt)) == Set(expected.map { F.at($0.expires) }))
        }
    }
}
