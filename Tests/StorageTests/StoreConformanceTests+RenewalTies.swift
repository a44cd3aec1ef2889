import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Two renewal infos of one subscription signed at the same instant with different content:
/// the stored one, and so the state derived from it, is the same whichever arrives first.
extension StoreConformanceTests {
    /// The stored renewal infos: jws and fact, by original transaction.
    static func renewalRows(in store: any Store) async throws -> [[SQLValue]] {
        try await store.read { reader in
            try reader.sql(
                "SELECT original_transaction_id, signed_date, jws, fact_json FROM signed_renewal_infos ORDER BY id"
            ).map(\.values)
        }
    }

    @Test(
        "renewal infos signed at the same instant: one kept, the same in any arrival order",
        arguments: Backend.enabled)
    func renewalInfosWithOneSignedDateAreKeptRegardlessOfOrder(backend: Backend) async throws {
        let renewing = RenewalFact(
            originalTransactionId: "tie-1", productId: "monthly", autoRenewProductId: "monthly",
            autoRenewEnabled: true, signedDate: F.now, environment: .production)
        var cancelled = renewing
        cancelled.autoRenewEnabled = false
        cancelled.expirationIntent = 1
        let first = NewRenewalInfo(
            appId: F.appId, jws: "a.renewing.jws", fact: renewing, source: "api", receivedAt: F.now)
        let second = NewRenewalInfo(
            appId: F.appId, jws: "b.cancelled.jws", fact: cancelled, source: "notification", receivedAt: F.now)
        // Legacy facts have no JWS: the fact decides.
        var legacyOn = renewing
        legacyOn.originalTransactionId = "tie-2"
        var legacyOff = cancelled
        legacyOff.originalTransactionId = "tie-2"
        let legacy = [
            NewRenewalInfo(appId: F.appId, jws: nil, fact: legacyOn, source: "receipt", receivedAt: F.now),
            NewRenewalInfo(appId: F.appId, jws: nil, fact: legacyOff, source: "receipt", receivedAt: F.now),
        ]

        var stored: [[[SQLValue]]] = []
        for order in [[first, second] + legacy, [second, first] + legacy.reversed()] {
            try await withStore(backend) { store, _ in
                try await F.setUp(store)
                let insertions = try await store.write { tx in try order.map { try tx.insertRenewalInfo($0) } }
                // A replay of either changes nothing.
                let replays = try await store.write { tx in try order.map { try tx.insertRenewalInfo($0) } }
                #expect(replays.allSatisfy { $0.isDuplicate })
                #expect(insertions.filter { !$0.isDuplicate }.count >= 2)
                stored.append(try await Self.renewalRows(in: store))
            }
            // The bulk insert keeps the same row, in one statement or two.
            try await withStore(backend) { store, _ in
                try await F.setUp(store)
                _ = try await store.write { tx in try tx.insertRenewalInfos(order) }
                stored.append(try await Self.renewalRows(in: store))
            }
        }
        #expect(stored.count == 4)
        let kept = stored[0].sorted(by: Self.before)
        #expect(kept.count == 2)
        #expect(kept.first?[2] == .text("b.cancelled.jws"))
        // Of two legacy facts (no JWS), one by its fact JSON: the same in every order (below).
        #expect(kept.last?[2] == .null)
        for rows in stored { #expect(rows.sorted(by: Self.before) == kept) }
    }

    private static func before(_ a: [SQLValue], _ b: [SQLValue]) -> Bool {
        if case .text(let x) = a[0], case .text(let y) = b[0] { return x < y }
        return false
    }
}
