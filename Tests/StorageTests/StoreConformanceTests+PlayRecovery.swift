import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionWorkload

/// The Play recovery workers' state (migration `0017_play_recovery`) on both engines: the
/// voided-purchases cursor leased to one owner and moved forward only by it (two connections
/// racing: one wins), and the subscription watch written with each read, newest read first,
/// claimed once while leased.
extension StoreConformanceTests {
    @Test(
        "play recovery: the voided cursor is leased to one owner, moved forward only by it", arguments: Backend.enabled)
    func playVoidedCursorLease(backend: Backend) async throws {
        try await withStore(backend) { store, database in
            try await store.write { tx in _ = try tx.insertApp(F.app, at: F.at(0)) }
            let (t0, lease): (Timestamp, Int64) = (F.at(0), 60_000)
            func take(_ owner: String, at now: Timestamp) async throws -> PlayVoidedCursor? {
                try await store.write { tx in
                    try tx.leasePlayVoidedCursor(appId: F.appId, owner: owner, now: now, leaseMilliseconds: lease)
                }
            }
            func advance(_ owner: String, to cursor: Timestamp, at now: Timestamp) async throws -> Bool {
                try await store.write { tx in
                    try tx.advancePlayVoidedCursor(
                        appId: F.appId, owner: owner, to: cursor, now: now, leaseMilliseconds: lease)
                }
            }
            let first = try #require(try await take("a", at: t0))
            #expect(first.cursorAt == nil && first.leaseOwner == "a" && first.lastRunAt == t0)
            #expect(first.leaseExpiresAt == t0.adding(milliseconds: lease))
            #expect(try await take("b", at: t0.adding(milliseconds: 1000)) == nil)
            #expect(try await advance("b", to: F.at(1), at: t0.adding(milliseconds: 1000)) == false)
            #expect(try await advance("a", to: F.at(1), at: t0.adding(milliseconds: 1000)))
            // Never backwards; each advance extends the lease.
            #expect(try await advance("a", to: t0, at: t0.adding(milliseconds: 50_000)))
            let moved = try #require(try await store.read { try $0.playVoidedCursor(appId: F.appId) })
            #expect(moved.cursorAt == F.at(1))
            #expect(moved.leaseExpiresAt == t0.adding(milliseconds: 50_000 + lease))
            #expect(try await take("b", at: t0.adding(milliseconds: lease + 1)) == nil)
            // After the lease expires another owner takes it, and the first can no longer move it.
            let expired = t0.adding(milliseconds: 50_000 + lease + 1)
            let second = try #require(try await take("b", at: expired))
            #expect(second.leaseOwner == "b" && second.cursorAt == F.at(1))
            #expect(try await advance("a", to: F.at(2), at: expired) == false)
            #expect(
                try await store.write { tx in
                    try tx.releasePlayVoidedCursor(
                        appId: F.appId, owner: "b", error: "google_play_unavailable", now: expired)
                })
            let released = try #require(try await store.read { try $0.playVoidedCursors() }.first)
            #expect(
                released
                    == PlayVoidedCursor(
                        appId: F.appId, cursorAt: F.at(1), leaseOwner: nil, leaseExpiresAt: nil, lastRunAt: expired,
                        lastError: "google_play_unavailable", updatedAt: expired))
            // Two owners racing for the free cursor on separate connections: exactly one wins.
            let other = try await database.open()
            let later = expired.adding(milliseconds: 1)
            async let one = take("c", at: later)
            async let two = other.write { tx in
                try tx.leasePlayVoidedCursor(appId: F.appId, owner: "d", now: later, leaseMilliseconds: lease)
            }
            let winners = [try await one, try await two].compactMap { $0?.leaseOwner }
            await other.close()
            #expect(winners.count == 1)
        }
    }

    @Test("play recovery: the watch keeps the newest read and claims what is due, once", arguments: Backend.enabled)
    func playSubscriptionWatch(backend: Backend) async throws {
        try await withStore(backend) { store, database in
            let day: Int64 = 86_400_000
            let rules = PlayRereadRules(expiryDelayMilliseconds: 3_600_000, pendingIntervalMilliseconds: day)
            try await store.write { tx in
                _ = try tx.insertApp(F.app, at: F.at(0))
                // Read active at day 1 until day 30; a late-arriving older read changes nothing.
                _ = try tx.insertPlayFact(Self.playSnapshot(token: "tok-active", read: 1, expiry: 30))
                _ = try tx.insertPlayFact(Self.playSnapshot(token: "tok-active", read: 0, state: .pending, expiry: 30))
                // Read in grace at day 31 until day 34.
                _ = try tx.insertPlayFact(
                    Self.playSnapshot(token: "tok-grace", read: 31, state: .inGracePeriod, expiry: 34))
                // Read expired: never due.
                _ = try tx.insertPlayFact(Self.playSnapshot(token: "tok-expired", read: 2, state: .expired, expiry: 2))
            }
            #expect(
                try await store.read { try $0.playSubscriptionWatch(appId: F.appId, purchaseToken: "tok-active") }
                    == PlaySubscriptionWatch(
                        appId: F.appId, purchaseToken: "tok-active", state: "SUBSCRIPTION_STATE_ACTIVE",
                        expiresAt: F.at(30), lastReadAt: F.at(1), lastRereadAt: nil))
            func claim(_ owner: String, at now: Timestamp, on other: (any Store)? = nil) async throws -> [String] {
                try await (other ?? store).write { tx in
                    try tx.claimPlayRereads(
                        appId: F.appId, rules: rules, owner: owner, now: now, leaseMilliseconds: 60_000, limit: 10)
                }.map(\.purchaseToken)
            }
            // Day 30 plus 59 minutes: nothing is due yet.
            #expect(try await claim("a", at: F.at(30).adding(milliseconds: 3_540_000)) == [])
            // Day 30 plus an hour: the active token's expiry passed with nothing read since.
            let t1 = F.at(30).adding(milliseconds: 3_600_000)
            #expect(try await claim("a", at: t1) == ["tok-active"])
            // Leased: another instance (another connection) does not get it.
            let other = try await database.open()
            #expect(try await claim("b", at: t1.adding(milliseconds: 1000), on: other) == [])
            #expect(
                try await store.write { tx in
                    try tx.finishPlayReread(
                        appId: F.appId, purchaseToken: "tok-active", owner: "b", rereadAt: t1, retryAt: nil)
                } == false)
            #expect(
                try await store.write { tx in
                    try tx.finishPlayReread(
                        appId: F.appId, purchaseToken: "tok-active", owner: "a", rereadAt: t1, retryAt: nil)
                })
            // Re-read after its expiry and still read active past it (a renewal Google has not
            // charged yet): not due again within the interval (the grace token is not due yet
            // either), but due once the interval passed — it was never due again, so a lost
            // renewal push after a late renewal went unseen for ever.
            #expect(try await claim("b", at: F.at(31), on: other) == [])
            // The grace token: due a day after its read (still in grace), and again once its
            // (grace) expiry passed; a failed re-read keeps the lease until its retry time.
            #expect(try await claim("b", at: F.at(32), on: other) == ["tok-active", "tok-grace"])
            #expect(
                try await store.write { tx in
                    try tx.finishPlayReread(
                        appId: F.appId, purchaseToken: "tok-grace", owner: "b", rereadAt: nil, retryAt: F.at(33))
                })
            #expect(
                try await store.write { tx in
                    try tx.finishPlayReread(
                        appId: F.appId, purchaseToken: "tok-active", owner: "b", rereadAt: F.at(32), retryAt: nil)
                })
            #expect(try await claim("a", at: F.at(32).adding(milliseconds: day / 2)) == [])
            #expect(try await claim("a", at: F.at(33)) == ["tok-active", "tok-grace"])
            await other.close()
            // A newer read replaces the state and expiry (a renewal found by the re-read).
            try await store.write { tx in
                _ = try tx.insertPlayFact(
                    Self.playSnapshot(token: "tok-active", read: 31, expiry: 60, order: "GPA.1..0"))
            }
            #expect(
                try await store.read { try $0.playSubscriptionWatch(appId: F.appId, purchaseToken: "tok-active") }
                    == PlaySubscriptionWatch(
                        appId: F.appId, purchaseToken: "tok-active", state: "SUBSCRIPTION_STATE_ACTIVE",
                        expiresAt: F.at(60), lastReadAt: F.at(31), lastRereadAt: F.at(32)))
        }
    }
}
