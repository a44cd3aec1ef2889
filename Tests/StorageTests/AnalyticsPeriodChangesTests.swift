import AppStoreModels
import Entitlements
import Testing

@testable import Storage

/// Which stored periods a re-evaluation deletes and which it inserts, found by a walk over the
/// two lists in transaction order: the same as looking every period up by its id, over random
/// stored and wanted sets (ids shared, changed, dropped and added).
@Suite struct AnalyticsPeriodChangesTests {
    static func period(_ id: String, mrr: Int64) -> AnalyticsPeriod {
        AnalyticsPeriod(
            transactionId: id, subscription: "premium", productId: "monthly", subscriptionGroup: "premium",
            storefront: "USA", currency: "USD", activity: .paid, start: Timestamp(millisecondsSince1970: 0),
            end: Timestamp(millisecondsSince1970: 1), mrrGross: mrr, mrrProceeds: mrr, run: nil)
    }

    /// Seeded, so a failure replays.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
    }

    @Test func aWalkFindsWhatLookupsById() {
        var random = Generator(state: 0xA11C_E5ED)
        func next(_ bound: Int) -> Int { Int.random(in: 0..<max(1, bound), using: &random) }
        var changedSomewhere = 0
        for _ in 0..<500 {
            let ids = (0..<next(40)).map { "\(1_000 + $0 * 7)" } + ["2000.a", "2000-b", "é1"]
            var stored: [AnalyticsPeriod] = []
            var wanted: [AnalyticsPeriod] = []
            for id in ids {
                switch next(4) {
                case 0: stored.append(Self.period(id, mrr: 1))
                case 1: wanted.append(Self.period(id, mrr: 1))
                case 2:
                    stored.append(Self.period(id, mrr: 1))
                    wanted.append(Self.period(id, mrr: 1))
                default:
                    stored.append(Self.period(id, mrr: 1))
                    wanted.append(Self.period(id, mrr: 2))
                }
            }
            let storedInOrder = SQLStoreTransaction.inTransactionOrder(stored.shuffled(using: &random))
            let wantedInOrder = SQLStoreTransaction.inTransactionOrder(wanted.shuffled(using: &random))
            #expect(storedInOrder.map(\.transactionId) == stored.map(\.transactionId).sorted())
            let byId = Dictionary(uniqueKeysWithValues: wantedInOrder.map { ($0.transactionId, $0) })
            let kept = Dictionary(uniqueKeysWithValues: storedInOrder.map { ($0.transactionId, $0) })
            let expectedStale = storedInOrder.filter { byId[$0.transactionId] != $0 }.map(\.transactionId)
            let expectedFresh = wantedInOrder.filter { kept[$0.transactionId] != $0 }
            let changes = SQLStoreTransaction.changes(from: storedInOrder, to: wantedInOrder)
            #expect(changes.stale == expectedStale)
            #expect(changes.fresh == expectedFresh)
            if !expectedStale.isEmpty && !expectedFresh.isEmpty { changedSomewhere += 1 }
        }
        #expect(changedSomewhere > 400)
        // Repeated ids (never stored): the first stored and the last wanted of an id count.
        let changes = SQLStoreTransaction.changes(
            from: [Self.period("a", mrr: 1), Self.period("a", mrr: 2)],
            to: [Self.period("a", mrr: 3), Self.period("a", mrr: 1)])
        #expect(changes.stale == ["a"])
        #expect(changes.fresh == [Self.period("a", mrr: 3)])
    }
}
