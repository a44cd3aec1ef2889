import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// The recovery workers' state (0009): history cursors leased to one owner and moved only
/// forward by it, and the subscription watch that status polling claims from.
extension StoreConformanceTests {
    @Test("recovery: a history cursor is leased to one owner, moved forward only by it", arguments: Backend.enabled)
    func historyCursorLease(backend: Backend) async throws {
        try await withStore(backend) { store, database in
            try await F.setUp(store)
            let (t0, lease): (Timestamp, Int64) = (F.at(0), 60_000)
            func take(_ owner: String, at now: Timestamp) async throws -> HistoryCursor? {
                try await store.write { tx in
                    try tx.leaseHistoryCursor(
                        appId: F.appId, environment: .sandbox, owner: owner, now: now, leaseMilliseconds: lease)
                }
            }
            func advance(_ owner: String, to cursor: Timestamp, at now: Timestamp) async throws -> Bool {
                try await store.write { tx in
                    try tx.advanceHistoryCursor(
                        appId: F.appId, environment: .sandbox, owner: owner, to: cursor, now: now)
                }
            }
            let first = try #require(try await take("a", at: t0))
            #expect(first.cursorAt == nil && first.leaseOwner == "a")
            #expect(first.leaseExpiresAt == t0.adding(milliseconds: lease))
            #expect(try await take("b", at: t0.adding(milliseconds: 1000)) == nil)
            #expect(try await advance("b", to: F.at(1), at: t0.adding(milliseconds: 1000)) == false)
            #expect(try await advance("a", to: F.at(1), at: t0.adding(milliseconds: 1000)))
            // Never backwards.
            #expect(try await advance("a", to: t0, at: t0.adding(milliseconds: 2000)))
            #expect(
                try await store.read { try $0.historyCursor(appId: F.appId, environment: .sandbox) }?.cursorAt
                    == F.at(1))
            // After the lease expires another owner takes it, and the first can no longer move it.
            let expired = t0.adding(milliseconds: lease + 1)
            let second = try #require(try await take("b", at: expired))
            #expect(second.leaseOwner == "b" && second.cursorAt == F.at(1))
            #expect(try await advance("a", to: F.at(2), at: expired) == false)
            #expect(
                try await store.write { tx in
                    try tx.releaseHistoryCursor(
                        appId: F.appId, environment: .sandbox, owner: "b", error: "stopped", now: expired)
                })
            let released = try #require(try await store.read { try $0.historyCursors() }.first)
            #expect(released.leaseOwner == nil && released.lastError == "stopped" && released.cursorAt == F.at(1))
            // Two owners racing for a free cursor on separate connections: exactly one wins.
            let other = try await database.open()
            async let one = take("c", at: expired.adding(milliseconds: 1))
            async let two = other.write { tx in
                try tx.leaseHistoryCursor(
                    appId: F.appId, environment: .sandbox, owner: "d", now: expired.adding(milliseconds: 1),
                    leaseMilliseconds: lease)
            }
            let winners = [try await one, try await two].compactMap { $0?.leaseOwner }
            await other.close()
            #expect(winners.count == 1)
        }
    }

    @Test("recovery: the subscription watch keeps the newest facts and claims what is due", arguments: Backend.enabled)
    func subscriptionWatch(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let day: Int64 = 86_400_000
            let t0 = F.at(0)
            let rules = SubscriptionPollRules(
                expiryDelayMilliseconds: 3_600_000, billingRetryIntervalMilliseconds: day,
                staleAfterMilliseconds: 7 * day)
            try await store.write { tx in
                // Expires at day 30, last heard at day 0.
                try tx.watchSubscription(
                    SubscriptionWatchUpdate(
                        appId: F.appId, environment: .sandbox, originalTransactionId: "100", expiresAt: F.at(30),
                        factAt: t0))
                // An older transaction arriving later does not move the expiry back.
                try tx.watchSubscription(
                    SubscriptionWatchUpdate(
                        appId: F.appId, environment: .sandbox, originalTransactionId: "100", expiresAt: F.at(1),
                        factAt: F.at(2)))
                // In billing retry by its newest renewal info; an older one arriving later changes nothing.
                try tx.watchSubscription(
                    SubscriptionWatchUpdate(
                        appId: F.appId, environment: .sandbox, originalTransactionId: "200", renewalSignedAt: F.at(5),
                        billingRetry: true, factAt: F.at(5)))
                try tx.watchSubscription(
                    SubscriptionWatchUpdate(
                        appId: F.appId, environment: .sandbox, originalTransactionId: "200", renewalSignedAt: F.at(4),
                        billingRetry: false, factAt: F.at(5)))
            }
            let watched = try #require(
                try await store.read {
                    try $0.subscriptionWatch(appId: F.appId, environment: .sandbox, originalTransactionId: "100")
                })
            #expect(watched.expiresAt == F.at(30) && watched.lastFactAt == F.at(2) && !watched.billingRetry)
            let retry = try await store.read {
                try $0.subscriptionWatch(appId: F.appId, environment: .sandbox, originalTransactionId: "200")
            }
            #expect(retry?.billingRetry == true)
            func claim(_ owner: String, at now: Timestamp) async throws -> [String] {
                try await store.write { tx in
                    try tx.claimSubscriptionPolls(
                        appId: F.appId, environment: .sandbox, rules: rules, owner: owner, now: now,
                        leaseMilliseconds: 60_000, limit: 10)
                }.map(\.originalTransactionId)
            }
            // Day 5.5: 200 heard at day 5, retry interval one day: not yet; 100 active, quiet 3.5 days: not yet.
            #expect(try await claim("a", at: F.at(5).adding(milliseconds: day / 2)) == [])
            // Day 9.5: 100 is quiet for 7.5 days (stale) and 200 due for its billing-retry poll.
            let now = F.at(9).adding(milliseconds: day / 2)
            #expect(try await claim("a", at: now) == ["100", "200"])
            #expect(try await claim("b", at: now) == [])
            #expect(
                try await store.write { tx in
                    try tx.finishSubscriptionPoll(
                        appId: F.appId, environment: .sandbox, originalTransactionId: "100", owner: "a", polledAt: now,
                        retryAt: nil)
                })
            // Polled: not due until quiet for seven days again, or past its expiry plus the delay.
            #expect(try await claim("b", at: now.adding(milliseconds: 61_000)) == ["200"])
            #expect(
                try await store.write { tx in
                    try tx.finishSubscriptionPoll(
                        appId: F.appId, environment: .sandbox, originalTransactionId: "200", owner: "b",
                        polledAt: F.at(30), retryAt: nil)
                })
            #expect(try await claim("c", at: F.at(30).adding(milliseconds: 3_000_000)) == [])
            #expect(try await claim("c", at: F.at(30).adding(milliseconds: 3_600_000)) == ["100"])
        }
    }
}
