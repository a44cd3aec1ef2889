import AppStoreModels
import Entitlements
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// `applyAnalyticsPeriods` compares each stored row in place with the wanted period of its id
/// and rewrites only those that differ: over random rounds (ids kept, changed in each member,
/// dropped and added; texts with dots, dashes and non-ASCII letters), what is stored afterwards
/// is exactly the wanted set, and the answer says whether anything changed.
@Suite struct AnalyticsPeriodChangesTests {
    /// Seeded, so a failure replays.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
    }

    static func period(_ id: String) -> AnalyticsPeriod {
        AnalyticsPeriod(
            transactionId: id, subscription: "premium", productId: "monthly", subscriptionGroup: "premium",
            storefront: "USA", currency: "USD", activity: .paid, start: Timestamp(millisecondsSince1970: 0),
            end: Timestamp(millisecondsSince1970: 1), mrrGross: 1, mrrProceeds: 1, run: nil)
    }

    /// `period` with one member changed, chosen by `member`.
    static func changed(_ period: AnalyticsPeriod, _ member: Int) -> AnalyticsPeriod {
        var period = period
        let t = { (milliseconds: Int64) in Timestamp(millisecondsSince1970: milliseconds) }
        switch member {
        case 0: period.subscription += "x"
        case 1: period.productId = period.productId == "monthly" ? "yearly" : "monthly"
        case 2: period.subscriptionGroup = period.subscriptionGroup.isEmpty ? "premium" : ""
        case 3: period.storefront = period.storefront == "USA" ? "FRA" : "USA"
        case 4: period.currency = period.currency == "USD" ? "EUR" : "USD"
        case 5: period.activity = period.activity == .paid ? .trial : .paid
        case 6: period.start = t(period.start.millisecondsSince1970 + 1)
        case 7: period.end = t(period.end.millisecondsSince1970 + 1)
        case 8: period.mrrGross += 1
        case 9: period.mrrProceeds -= 1
        case 10: period.run = period.run == nil ? AnalyticsPeriod.Run(start: t(0), nextStart: nil, reason: nil) : nil
        case 11:
            period.run = AnalyticsPeriod.Run(
                start: t(5), nextStart: period.run?.nextStart == nil ? t(9) : nil, reason: period.run?.reason)
        case 12:
            period.run = AnalyticsPeriod.Run(
                start: t(5), nextStart: period.run?.nextStart,
                reason: period.run?.reason == .voluntary ? .involuntary : .voluntary)
        default: period.store = period.store == .appStore ? .googlePlay : .appStore
        }
        return period
    }

    @Test("what is applied is exactly what is stored afterwards", arguments: Backend.enabled)
    func appliedPeriodsAreStored(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let customer = try await store.write { try $0.ensureCustomer(appId: F.appId, appUserId: "p", at: F.at(0)) }
            var random = Generator(state: 0xA11C_E5ED)
            func next(_ bound: Int) -> Int { Int.random(in: 0..<max(1, bound), using: &random) }
            var current: [AnalyticsPeriod] = []
            var changedRounds = 0
            var largest = 0
            for round in 0..<80 {
                var wanted: [AnalyticsPeriod] = []
                for period in current {
                    switch next(6) {
                    case 0: continue  // dropped
                    case 1, 2: wanted.append(Self.changed(period, next(14)))
                    default: wanted.append(period)
                    }
                }
                let fresh = ["\(round)", "\(round).a", "\(round)-b", "é\(round)"]
                for id in fresh where next(3) == 0 { wanted.append(Self.changed(Self.period(id), next(14))) }
                // Every fifth round changes nothing.
                if round % 5 == 4 { wanted = current }
                let sorted = wanted.sorted { $0.transactionId < $1.transactionId }
                let given = wanted.shuffled(using: &random)
                let (changed, stored) = try await store.write { tx in
                    let sql = tx as! SQLStoreTransaction
                    let changed = try sql.applyAnalyticsPeriods(
                        customerId: customer.id, appId: F.appId, environment: .production, given)
                    return (changed, try sql.analyticsPeriods(customerId: customer.id, environment: .production))
                }
                #expect(stored == sorted, "round \(round)")
                #expect(changed == (sorted != current), "round \(round)")
                if changed { changedRounds += 1 }
                largest = max(largest, sorted.count)
                current = sorted
            }
            #expect(changedRounds > 50)
            #expect(largest >= 8)
        }
    }

    /// A changed period is one UPDATE of its row (it was a DELETE and an INSERT); an id no
    /// longer wanted is deleted. SQLite counts the rows each statement changed.
    @Test func aChangedPeriodIsRewrittenInPlace() async throws {
        try await withStore(.sqlite) { store, _ in
            try await F.setUp(store)
            let customer = try await store.write { try $0.ensureCustomer(appId: F.appId, appUserId: "p", at: F.at(0)) }
            func apply(_ periods: [AnalyticsPeriod]) async throws -> (changes: Int64, stored: [AnalyticsPeriod]) {
                try await store.write { tx in
                    let sql = tx as! SQLStoreTransaction
                    let before = try #require(try sql.row("SELECT total_changes()")).integer(0)
                    _ = try sql.applyAnalyticsPeriods(
                        customerId: customer.id, appId: F.appId, environment: .production, periods)
                    let after = try #require(try sql.row("SELECT total_changes()")).integer(0)
                    return (after - before, try sql.analyticsPeriods(customerId: customer.id, environment: .production))
                }
            }
            let a = Self.period("a")
            let b = Self.period("b")
            #expect(try await apply([a, b]).changes == 2)
            let changedB = Self.changed(b, 8)
            let updated = try await apply([a, changedB])
            #expect(updated.changes == 1)
            #expect(updated.stored == [a, changedB])
            // One dropped, one new, one changed: a DELETE, an INSERT and an UPDATE.
            let changedA = Self.changed(a, 3)
            let mixed = try await apply([changedA, Self.period("c")])
            #expect(mixed.changes == 3)
            #expect(mixed.stored == [changedA, Self.period("c")])
        }
    }

    /// An id stored in one Unicode spelling and wanted in another (equal to Swift, not to the
    /// key) is replaced, not kept beside the new one.
    @Test("an id in another Unicode spelling replaces the stored one", arguments: Backend.enabled)
    func anotherSpellingOfAnIdReplacesIt(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let customer = try await store.write { try $0.ensureCustomer(appId: F.appId, appUserId: "p", at: F.at(0)) }
            let composed = Self.period("\u{E9}t\u{E9}")
            let decomposed = Self.changed(Self.period("e\u{301}te\u{301}"), 8)
            #expect(composed.transactionId == decomposed.transactionId)
            for wanted in [composed, decomposed] {
                _ = try await store.write { tx in
                    try (tx as! SQLStoreTransaction).applyAnalyticsPeriods(
                        customerId: customer.id, appId: F.appId, environment: .production, [wanted])
                }
            }
            let stored = try await store.write { tx in
                try (tx as! SQLStoreTransaction).analyticsPeriods(customerId: customer.id, environment: .production)
            }
            #expect(stored.count == 1)
            #expect(stored.first.map { Array($0.transactionId.utf8) } == Array("e\u{301}te\u{301}".utf8))
            #expect(stored == [decomposed])
        }
    }
}
