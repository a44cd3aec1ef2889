import Foundation
import Testing

@testable import Entitlements

/// The same set of facts gives the same state and the same event ids whatever the arrival
/// order and duplication. Seeded: set ENTITLEMENTS_SEED to replay a failure.
@Suite struct OrderIndependenceTests {
    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["ENTITLEMENTS_SEED"].flatMap { UInt64($0) }
        ?? 0x5EED_2026_0401
    /// 4 shards × 500 customers × 5 arrival orders = 10,000 cases; shards run in parallel.
    static let customersPerShard = 500
    static let permutationsPerCustomer = 5

    @Test(arguments: 0..<4)
    func permutationsAndDuplicatesGiveTheSameStateAndEvents(shard: UInt64) {
        let seed = Self.seed &+ shard
        var random = SeededGenerator(seed: seed)
        var cases = 0
        var failures = 0
        for customer in 0..<Self.customersPerShard {
            let (facts, now) = RandomCustomer.facts(using: &random)
            let baseline = Fixture.evaluate(facts, at: now)
            for permutation in 0..<Self.permutationsPerCustomer {
                var arrival = facts.shuffled(using: &random)
                for _ in 0..<Int.random(in: 0...5, using: &random) {
                    arrival.insert(
                        facts.randomElement(using: &random)!, at: Int.random(in: 0...arrival.count, using: &random))
                }
                let evaluation = Fixture.evaluate(arrival, at: now)
                cases += 1
                if evaluation.customerInfo != baseline.customerInfo
                    || evaluation.allEvents.map(\.id) != baseline.allEvents.map(\.id)
                {
                    failures += 1
                    if failures <= 3 {
                        Issue.record(
                            "seed \(seed): customer \(customer), permutation \(permutation) differs from the canonical order"
                        )
                    }
                }
            }
        }
        #expect(cases == 2_500)
        #expect(failures == 0, "seed \(seed): \(failures) of \(cases) cases differ")
    }

    /// Facts arriving one at a time, in random order, each evaluation handed the previous
    /// state: the final state is the batch state, no event of the batch is lost, and replaying
    /// everything reports nothing new.
    @Test func incrementalArrivalConvergesAndLosesNoEvent() {
        var random = SeededGenerator(seed: Self.seed ^ 0xA5A5)
        for customer in 0..<100 {
            let (facts, now) = RandomCustomer.facts(using: &random)
            let baseline = EntitlementEngine.evaluate(
                customerId: Fixture.customer, environment: .production, facts: facts, catalog: Fixture.catalog,
                now: Fixture.day(now))
            var known: [Fact] = []
            var previous: CustomerInfo?
            var reported = Set<String>()
            for fact in facts.shuffled(using: &random) {
                known.append(fact)
                let step = EntitlementEngine.evaluate(
                    customerId: Fixture.customer, environment: .production, facts: known, catalog: Fixture.catalog,
                    now: Fixture.day(now), previous: previous)
                reported.formUnion(step.newEvents.map(\.id))
                previous = step.customerInfo
            }
            let missing = Set(baseline.allEvents.map(\.id)).subtracting(reported)
            #expect(previous == baseline.customerInfo, "seed \(Self.seed): customer \(customer) final state differs")
            #expect(missing.isEmpty, "seed \(Self.seed): customer \(customer) never reported \(missing.sorted())")
            let replay = EntitlementEngine.evaluate(
                customerId: Fixture.customer, environment: .production, facts: facts + facts, catalog: Fixture.catalog,
                now: Fixture.day(now), previous: baseline.customerInfo)
            #expect(replay.newEvents.isEmpty, "seed \(Self.seed): customer \(customer) replay reported events")
        }
    }
}
