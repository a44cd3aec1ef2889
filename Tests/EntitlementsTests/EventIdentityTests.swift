import AppStoreModels
import Foundation
import Testing

@testable import Entitlements

/// Issue 17, item 6: an event's identity comes from the change it reports, so any arrival order
/// of the same facts leaves the same standing events (what the store keeps unretracted).
@Suite struct EventIdentityTests {
    typealias F = Fixture

    /// What the store does with each evaluation (`CustomerStateUpdater.update`): new ids are
    /// inserted, retracted ones reinstated with their new content, standing ones revised to the
    /// derived content; `retractedEventIds` are marked retracted, each with an `EVENT_RETRACTED`.
    struct EventLog {
        private(set) var rows: [String: (event: LifecycleEvent, retracted: Bool)] = [:]
        private(set) var order: [String] = []
        /// Every event as first inserted or reinstated: what webhooks delivered.
        private(set) var delivered: [LifecycleEvent] = []
        var previous: CustomerInfo?

        mutating func evaluate(_ facts: [Fact], now: Timestamp) {
            let evaluation = EntitlementEngine.evaluate(
                customerId: F.customer, environment: .production, facts: facts, catalog: F.catalog, now: now,
                previous: previous)
            previous = evaluation.customerInfo
            for id in evaluation.retractedEventIds {
                guard let row = rows[id], !row.retracted else { continue }
                rows[id]!.retracted = true
                append(LifecycleEvent.retraction(of: row.event, at: now))
            }
            for event in evaluation.newEvents { append(event) }
            for event in evaluation.allEvents where rows[event.id]?.retracted == false {
                rows[event.id]!.event = event
            }
        }

        private mutating func append(_ event: LifecycleEvent) {
            if let row = rows[event.id] {
                guard row.retracted else { return }
                rows[event.id] = (event, false)
            } else {
                rows[event.id] = (event, false)
                order.append(event.id)
            }
            delivered.append(event)
        }

        /// Events standing (not retracted), without the corrections (`EVENT_RETRACTED`,
        /// `EXPIRATION_REASON_UPDATED`), whose history depends on what was known when.
        var standing: [LifecycleEvent] {
            rows.values.filter {
                !$0.retracted && $0.event.type != .eventRetracted && $0.event.type != .expirationReasonUpdated
            }.map(\.event).sorted(by: LifecycleEvent.chronological)
        }

        var retractions: [String] {
            order.compactMap { rows[$0]?.event }.filter { $0.type == .eventRetracted }.compactMap(\.retractedEventId)
        }
    }

    static func ms(_ day: Double) -> Int64 { F.day(day).millisecondsSince1970 }

    /// The reproduction: purchase, renewal (its renewal info says auto-renew on), auto-renew off
    /// and back on, then the previous period's auto-renew off arriving last. The counting ids
    /// (`UNCANCELLATION/t2/1`, `/2`) reported the d40 change twice; now each change has one event,
    /// named by its instant, and the order of arrival changes nothing.
    @Test func lateOlderAutoRenewOffReportsEachUncancellationOnce() {
        let facts: [Fact] = [
            F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 0),
            F.tx("t2", "monthly", 30, 60, reason: .renewal), F.ri("monthly", signed: 30),
            F.ri("monthly", signed: 35, autoRenew: false), F.ri("monthly", signed: 40),
            F.ri("monthly", signed: 10, autoRenew: false),
        ]
        // Each fact evaluated when it arrives: on time, except the d10 snapshot at d41.
        let arrivals: [Double] = [0, 0, 30, 30, 35, 40, 41]
        var log = EventLog()
        for count in 1...facts.count {
            log.evaluate(Array(facts.prefix(count)), now: F.day(arrivals[count - 1]))
        }
        let uncancellations = log.standing.filter { $0.type == .uncancellation }
        #expect(
            uncancellations.map(Rendering.event) == [
                "UNCANCELLATION/t2/\(Self.ms(30))@d30", "UNCANCELLATION/t2/\(Self.ms(40))@d40",
            ])
        #expect(uncancellations.filter { $0.occurredAt == F.day(40) }.count == 1)
        // Each change was delivered once: the d40 re-enable was not reported again under a new id.
        #expect(
            log.delivered.filter { $0.type == .uncancellation }.map { F.label($0.occurredAt) }.sorted() == [
                "d30", "d40",
            ])
        #expect(
            log.standing.map(Rendering.event) == [
                "INITIAL_PURCHASE/t1@d0 proceeds=6993", "CANCELLATION/t1/\(Self.ms(10))@d10",
                "RENEWAL/t2@d30 proceeds=6993", "UNCANCELLATION/t2/\(Self.ms(30))@d30",
                "CANCELLATION/t2/\(Self.ms(35))@d35", "UNCANCELLATION/t2/\(Self.ms(40))@d40",
            ])
        #expect(log.retractions == [])
        var sequential = EventLog()
        for count in 1...facts.count {
            sequential.evaluate(
                Array(facts.sorted { F.signedDate(of: $0) < F.signedDate(of: $1) }.prefix(count)), now: F.day(41))
        }
        #expect(sequential.standing == log.standing)
    }

    /// A late older snapshot that moves a change earlier: auto-renew off seen at d20, then the
    /// off of d12 arrives. The change happened at d12: the d20 event is retracted (one
    /// `EVENT_RETRACTED`), the d12 one stands, as if the facts had come in order.
    @Test func lateOlderSnapshotMovingAChangeRetractsTheLaterOne() {
        let facts: [Fact] = [
            F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 0), F.ri("monthly", signed: 20, autoRenew: false),
            F.ri("monthly", signed: 12, autoRenew: false),
        ]
        var log = EventLog()
        for count in 1...facts.count { log.evaluate(Array(facts.prefix(count)), now: F.day(21)) }
        #expect(
            log.standing.map(Rendering.event) == [
                "INITIAL_PURCHASE/t1@d0 proceeds=6993", "CANCELLATION/t1/\(Self.ms(12))@d12",
            ])
        #expect(log.retractions == ["CANCELLATION/t1/\(Self.ms(20))"])
        #expect(log.standing == F.evaluate(facts, at: 21).allEvents)
    }

    /// An expiry reported from time alone, then the renewal signed before it arrives late: the
    /// subscription never lapsed, so the EXPIRATION is retracted and the RENEWAL stands.
    @Test func lateRenewalRetractsTheExpirationTimeReported() {
        var log = EventLog()
        let first: [Fact] = [F.tx("t1", "monthly", 0, 30)]
        log.evaluate(first, now: F.day(31))
        #expect(
            log.standing.map(Rendering.event) == ["INITIAL_PURCHASE/t1@d0 proceeds=6993", "EXPIRATION/t1@d30 UNKNOWN"])
        log.evaluate(first + [F.tx("t2", "monthly", 30, 60, signed: 29.5, reason: .renewal)], now: F.day(32))
        #expect(
            log.standing.map(Rendering.event) == [
                "INITIAL_PURCHASE/t1@d0 proceeds=6993", "RENEWAL/t2@d30 proceeds=6993",
            ])
        #expect(log.retractions == ["EXPIRATION/t1"])
    }

    /// Facts moved to another customer (an alias merge, a transfer) retract nothing: the events
    /// happened while this customer held them.
    @Test func factsThatLeaveRetractNothing() {
        let facts: [Fact] = [F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 5, autoRenew: false)]
        let held = F.evaluate(facts, at: 6)
        let left = F.evaluate([], at: 7, previous: held.customerInfo)
        #expect(held.allEvents.count == 2)
        #expect(left.retractedEventIds == [])
    }

    /// A stored state whose ids are not in order (written by hand or by an older version) is
    /// read as a set: the expiration a late renewal covered is still retracted, once, and an
    /// id still implied that was listed after a larger one is not.
    @Test func unorderedStoredIdsRetractAsSortedOnes() {
        let first: [Fact] = [F.tx("t1", "monthly", 0, 30)]
        var stored = F.evaluate(first, at: 31).customerInfo
        #expect(stored.eventIds == ["EXPIRATION/t1", "EXPIRATION_REASON_UPDATED/t1/UNKNOWN", "INITIAL_PURCHASE/t1"])
        stored.eventIds = ["RENEWAL/t2"] + stored.eventIds.reversed() + ["EXPIRATION/t1"]
        let later = F.evaluate(
            first + [F.tx("t2", "monthly", 30, 60, signed: 29.5, reason: .renewal)], at: 32, previous: stored)
        #expect(later.retractedEventIds == ["EXPIRATION/t1"])
        #expect(later.newEvents.map(\.id) == [])
    }

    /// The walk that finds ids no longer implied: distinct, sorted, whatever the order of the
    /// first list.
    @Test func sortedDifferenceOfIdLists() {
        #expect(EntitlementEngine.sortedDifference(["a", "b", "c", "e"], ["b", "d", "e"]) == ["a", "c"])
        #expect(EntitlementEngine.sortedDifference(["e", "a", "c", "a", "b"], ["b"]) == ["a", "c", "e"])
        #expect(EntitlementEngine.sortedDifference([], ["a"]) == [])
        #expect(EntitlementEngine.sortedDifference(["z", "y"], []) == ["y", "z"])
        #expect(EntitlementEngine.sortedDifference(["a", "a"], ["a"]) == [])
        // Swift's strings compare by canonical equivalence, as the set they replace did.
        #expect(EntitlementEngine.sortedDifference(["e\u{301}", "f"], ["\u{e9}"]) == ["f"])
    }

    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["ENTITLEMENTS_SEED"].flatMap { UInt64($0) } ?? 0xE7E1_D017_2026

    /// Every field of every standing event, in a fixed order.
    static func comparable(_ events: [LifecycleEvent]) -> [String] { events.map { "\($0)" }.sorted() }

    /// Random customers (`RandomCustomer`), each evaluated after every arrival, facts in signed
    /// order and in shuffled orders with duplicates: the standing events are identical (kind, id,
    /// instant, every field) and are those the facts imply at once.
    @Test func shuffledAndSequentialArrivalLeaveIdenticalEvents() {
        var random = SeededGenerator(seed: Self.seed)
        var retracted = 0
        var compared = 0
        for customer in 0..<150 {
            let (all, day) = RandomCustomer.facts(using: &random)
            let now = F.day(day)
            let facts = all.filter { F.signedDate(of: $0) <= now }
            let oracle = EntitlementEngine.evaluate(
                customerId: F.customer, environment: .production, facts: facts, catalog: F.catalog, now: now
            ).allEvents
            func replay(_ order: [Fact]) -> EventLog {
                var log = EventLog()
                for count in 0..<order.count { log.evaluate(Array(order.prefix(count + 1)), now: now) }
                if order.isEmpty { log.evaluate([], now: now) }
                return log
            }
            let sequential = replay(facts.sorted { F.signedDate(of: $0) < F.signedDate(of: $1) })
            #expect(
                Self.comparable(sequential.standing) == Self.comparable(oracle),
                "seed \(Self.seed): customer \(customer), sequential")
            for order in 0..<2 {
                var arrival = facts.shuffled(using: &random)
                for _ in 0..<Int.random(in: 0...3, using: &random) where !facts.isEmpty {
                    arrival.insert(
                        facts.randomElement(using: &random)!, at: Int.random(in: 0...arrival.count, using: &random))
                }
                let shuffled = replay(arrival)
                compared += 1
                retracted += shuffled.retractions.count
                let got = Self.comparable(shuffled.standing)
                let want = Self.comparable(sequential.standing)
                #expect(got == want, "seed \(Self.seed): customer \(customer), order \(order)")
                if got != want {
                    let got = Set(got)
                    let want = Set(want)
                    Issue.record("extra \(got.subtracting(want).sorted()) missing \(want.subtracting(got).sorted())")
                    return
                }
            }
        }
        #expect(compared == 300)
        // The shuffles did contradict events reported from part of the facts.
        #expect(retracted > 100)
    }
}
