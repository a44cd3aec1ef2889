import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionWorkload

/// Migration `0019_play_voided_resume` on both engines: the voided cursor keeps the window a run
/// left open and its page token (only for the lease's owner; moving the cursor closes it), and
/// voided purchases of tokens not read yet are kept, listed, counted, and settled (product type,
/// environment) by the token's first read.
extension StoreConformanceTests {
    @Test("play voided: the open window and its page token are kept with the lease", arguments: Backend.enabled)
    func playVoidedOpenWindow(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await store.write { tx in _ = try tx.insertApp(F.app, at: F.at(0)) }
            let (t0, lease): (Timestamp, Int64) = (F.at(0), 60_000)
            let window = PlayVoidedWindow(start: F.at(-29), end: t0, pageToken: "page-2")
            func hold(_ owner: String, _ window: PlayVoidedWindow?, at now: Timestamp) async throws -> Bool {
                try await store.write { tx in
                    try tx.holdPlayVoidedWindow(
                        appId: F.appId, owner: owner, window: window, now: now, leaseMilliseconds: lease)
                }
            }
            _ = try await store.write { tx in
                try tx.leasePlayVoidedCursor(appId: F.appId, owner: "a", now: t0, leaseMilliseconds: lease)
            }
            #expect(try await hold("b", window, at: t0) == false)
            #expect(try await hold("a", window, at: t0.adding(milliseconds: 1000)))
            var cursor = try #require(try await store.read { try $0.playVoidedCursor(appId: F.appId) })
            #expect(cursor.openWindow == window && cursor.cursorAt == nil)
            #expect(cursor.leaseExpiresAt == t0.adding(milliseconds: 1000 + lease))
            // Released and leased again by another owner: the window is still there to resume.
            _ = try await store.write { tx in
                try tx.releasePlayVoidedCursor(
                    appId: F.appId, owner: "a", error: nil, now: t0.adding(milliseconds: 2000))
            }
            cursor = try #require(
                try await store.write { tx in
                    try tx.leasePlayVoidedCursor(
                        appId: F.appId, owner: "b", now: t0.adding(milliseconds: 3000), leaseMilliseconds: lease)
                })
            #expect(cursor.openWindow == window)
            // Moving the cursor to the window's end closes the window.
            #expect(
                try await store.write { tx in
                    try tx.advancePlayVoidedCursor(
                        appId: F.appId, owner: "b", to: t0, now: t0.adding(milliseconds: 4000), leaseMilliseconds: lease
                    )
                })
            cursor = try #require(try await store.read { try $0.playVoidedCursor(appId: F.appId) })
            #expect(cursor.openWindow == nil && cursor.cursorAt == t0)
        }
    }

    @Test(
        "play voided: a token not read keeps its voided purchases until its read settles them",
        arguments: Backend.enabled)
    func playUnmatchedVoided(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let voided = PlayVoidedPurchaseFact(
                packageName: "com.example.play", purchaseToken: "tok-1", orderId: "GPA.1", productType: nil,
                voidedAt: F.at(2), voidedSource: 0, voidedReason: 1, refundType: .full, isTestPurchase: false)
            try await store.write { tx in
                _ = try tx.insertApp(F.app, at: F.at(0))
                _ = try tx.insertPlayFact(
                    NewPlayFact(
                        appId: F.appId, raw: #"{"purchaseToken":"tok-1"}"#, fact: .playVoidedPurchase(voided),
                        source: "voided_poll", receivedAt: F.at(3)))
            }
            #expect(try await store.read { try $0.playUnmatchedVoidedCount(appId: F.appId) } == 1)
            #expect(
                try await store.read { try $0.playUnmatchedVoided(appId: F.appId, limit: 10) }
                    == [PlayUnmatchedVoided(fact: voided, source: "voided_poll", receivedAt: F.at(3))])
            // The token's first read: a license tester's subscription.
            var tester = Self.playSnapshot(read: 4)
            if case .playSubscription(var value) = tester.fact {
                value.isTestPurchase = true
                tester.fact = .playSubscription(value)
            }
            let read = tester
            try await store.write { tx in _ = try tx.insertPlayFact(read) }
            #expect(try await store.read { try $0.playUnmatchedVoidedCount(appId: F.appId) } == 0)
            #expect(try await store.read { try $0.playUnmatchedVoided(appId: F.appId, limit: 10) } == [])
            let stored = try await store.write { tx in
                let sql = try #require(tx as? SQLStoreTransaction)
                return try sql.rows("SELECT environment, fact_json FROM play_snapshots WHERE kind = 'voided'").map {
                    row in
                    (
                        try row.text(0),
                        try SQLStoreTransaction.decode(
                            PlayVoidedPurchaseFact.self, try row.text(1), column: "fact_json")
                    )
                }
            }
            var settled = voided
            settled.productType = .subscription
            settled.isTestPurchase = true
            #expect(stored.map(\.0) == ["Sandbox"])
            #expect(stored.map(\.1) == [settled])
        }
    }
}
