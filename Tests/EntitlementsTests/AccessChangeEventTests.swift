import AppStoreModels
import Foundation
import Testing

@testable import Entitlements

/// Issue 16: every change of access gives exactly one event, dated at the instant it happens,
/// whether a notification or time tells it; later notifications add reasons, never a second event.
@Suite struct AccessChangeEventTests {
    typealias F = Fixture

    /// Evaluates `facts` known at `instant` (signed by then) against `previous`; the new events.
    private func step(_ facts: [Fact], at instant: Double, previous: inout CustomerInfo?) -> [String] {
        let evaluation = F.evaluate(facts, at: instant, previous: previous)
        previous = evaluation.customerInfo
        return evaluation.newEvents.map(Rendering.event)
    }

    /// The reproduction: DID_FAIL_TO_RENEW/GRACE_PERIOD with billing retry and intent 2; the
    /// grace end alone (the scheduler's re-evaluation) ends access with the billing reason,
    /// the customer still in billing retry; GRACE_PERIOD_EXPIRED afterwards adds nothing.
    @Test func graceEndIsAnExpirationAtTheGraceDateAndTheNotificationAddsNothing() {
        let base: [Fact] = [
            F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 30, retry: true, grace: 36, intent: 2),
            F.note(.didFailToRenew, .gracePeriod, signed: 30),
        ]
        var previous: CustomerInfo?
        #expect(
            step(base, at: 30, previous: &previous) == [
                "INITIAL_PURCHASE/t1@d0 proceeds=6993", "BILLING_ISSUE/t1@d30", "GRACE_PERIOD_STARTED/t1@d30",
            ])
        #expect(previous?.nextScheduledChange == F.day(36))
        #expect(step(base, at: 36, previous: &previous) == ["EXPIRATION/t1@d36 BILLING_ERROR"])
        #expect(previous?.subscriptions["monthly"]?.status == .inBillingRetry)
        #expect(previous?.subscriptions["monthly"]?.isActive == false)
        let withNotification = base + [F.note(.gracePeriodExpired, signed: 36.001)]
        #expect(step(withNotification, at: 36.002, previous: &previous) == [])
        // A later recovery reports itself as today.
        let recovered = withNotification + [F.tx("t2", "monthly", 45, 75, reason: .renewal)]
        #expect(
            step(recovered, at: 45, previous: &previous) == [
                "BILLING_RECOVERED/t2@d45", "RENEWAL/t2@d45 proceeds=6993",
            ])
    }

    /// Auto-renew off and the EXPIRED notification lost: the expiry at `expiresDate` by time;
    /// EXPIRED/VOLUNTARY arriving afterwards gives no second expiry, and the reason is voluntary.
    @Test func timeDrivenExpiryThenExpiredVoluntaryGivesOneExpiration() {
        let base: [Fact] = [F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 10, autoRenew: false)]
        var previous: CustomerInfo?
        _ = step(base, at: 10, previous: &previous)
        #expect(previous?.nextScheduledChange == F.day(30))
        #expect(step(base, at: 30, previous: &previous) == ["EXPIRATION/t1@d30 CUSTOMER_CANCELLED"])
        let late = base + [F.note(.expired, .voluntary, signed: 30.5)]
        #expect(step(late, at: 31, previous: &previous) == [])
        let replay = F.evaluate(late, at: 31)
        #expect(
            replay.allEvents.filter { $0.type == .expiration }.map(Rendering.event) == [
                "EXPIRATION/t1@d30 CUSTOMER_CANCELLED"
            ])
    }

    /// An already-lapsed period posted late has reason UNKNOWN; the EXPIRED notification that
    /// tells the reason corrects it with one EXPIRATION_REASON_UPDATED, never a second expiry.
    @Test func unknownExpirationReasonIsCorrectedOnce() {
        let base: [Fact] = [F.tx("t1", "monthly", 0, 30)]
        var previous: CustomerInfo?
        #expect(
            step(base, at: 40, previous: &previous) == [
                "INITIAL_PURCHASE/t1@d0 proceeds=6993", "EXPIRATION/t1@d30 UNKNOWN",
            ])
        let told = base + [F.note(.expired, .priceIncrease, signed: 41)]
        #expect(
            step(told, at: 42, previous: &previous) == [
                "EXPIRATION_REASON_UPDATED/t1/PRICE_INCREASE_NOT_CONSENTED@d41 PRICE_INCREASE_NOT_CONSENTED"
            ])
        #expect(step(told + told, at: 43, previous: &previous) == [])
        // A state saved before the reason markers existed adopts the reason silently.
        var legacy = F.evaluate(base, at: 40).customerInfo
        legacy.eventIds.removeAll { $0.hasPrefix("EXPIRATION_REASON_UPDATED/") }
        #expect(F.evaluate(told, at: 42, previous: legacy).newEvents.isEmpty)
    }

    /// A renewal whose previous period is missing from the facts is not a billing problem: no
    /// invented BILLING_ISSUE or BILLING_RECOVERED; access ended with the last known period and
    /// the renewal is marked `afterFactGap`.
    @Test func gapInTheFactsInventsNoBillingEvents() {
        let facts: [Fact] = [F.tx("t1", "monthly", 0, 30), F.tx("t3", "monthly", 60, 90, reason: .renewal)]
        let evaluation = F.evaluate(facts, at: 61)
        #expect(
            evaluation.allEvents.map(Rendering.event) == [
                "INITIAL_PURCHASE/t1@d0 proceeds=6993", "EXPIRATION/t1@d30 UNKNOWN", "RENEWAL/t3@d60 proceeds=6993",
            ])
        let renewal = evaluation.allEvents.last
        #expect(renewal?.isResubscription == true)
        #expect(renewal?.afterFactGap == true)
        #expect(evaluation.allEvents.first?.afterFactGap == nil)
        #expect(evaluation.customerInfo.subscriptions["monthly"]?.status == .active)
    }

    /// A refunded non-consumable is neither active nor restorable.
    @Test func refundedNonConsumableIsNotRestorable() {
        let facts: [Fact] = [
            F.tx("l1", "lifetime", 0, original: "l1"),
            F.tx("l1", "lifetime", 0, original: "l1", signed: 3, revokedAt: 3, revocationReason: 0),
        ]
        let purchase = F.evaluate(facts, at: 4).customerInfo.nonSubscriptionPurchases.first
        #expect(purchase?.isActive == false)
        #expect(purchase?.isRestorable == false)
        #expect(
            F.evaluate(Array(facts.prefix(1)), at: 4).customerInfo.nonSubscriptionPurchases.first?.isRestorable == true)
    }

    // MARK: - Property

    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["ENTITLEMENTS_SEED"].flatMap { UInt64($0) } ?? 0xACCE_55ED_2026

    /// Random subscription lives with Apple's timing (a renewal is signed before the expiry, a
    /// failed renewal's renewal info at the expiry) and notifications arriving on time, late or
    /// never; the customer is re-evaluated at every arrival and at every `nextScheduledChange`
    /// (the scheduler). The events reported along the way equal, id for id and instant for
    /// instant, those the delivered facts imply all at once, and none is reported twice.
    ///
    /// Not `RandomCustomer`: it signs facts after the instants they change (a retry snapshot
    /// after its period ended), which nobody can report on time.
    @Test func eventsReportedOverTimeEqualThoseTheFactsImply() {
        var random = SeededGenerator(seed: Self.seed)
        var scheduledChanges = 0
        var expirations = 0
        for customer in 0..<300 {
            let (arrivals, horizon) = Self.life(using: &random)
            var reported: [LifecycleEvent] = []
            var previous: CustomerInfo?
            var known: [Fact] = []
            var pending = arrivals.sorted { $0.at < $1.at }
            var steps = 0
            while steps < 2_000 {
                steps += 1
                let nextArrival = pending.first?.at
                let nextTick = previous?.nextScheduledChange
                let now: Timestamp
                switch (nextArrival, nextTick) {
                case (nil, nil): now = horizon
                case (let arrival?, nil): now = arrival
                case (nil, let tick?): now = tick
                case (let arrival?, let tick?): now = min(arrival, tick)
                }
                if now >= horizon && pending.isEmpty { break }
                if nextTick == now { scheduledChanges += 1 }
                while let first = pending.first, first.at <= now {
                    known.append(first.fact)
                    pending.removeFirst()
                }
                let evaluation = EntitlementEngine.evaluate(
                    customerId: F.customer, environment: .production, facts: known, catalog: F.catalog, now: now,
                    previous: previous)
                reported += evaluation.newEvents
                previous = evaluation.customerInfo
            }
            let oracle = EntitlementEngine.evaluate(
                customerId: F.customer, environment: .production, facts: arrivals.map(\.fact), catalog: F.catalog,
                now: horizon
            ).allEvents
            let changes = reported.filter { $0.type != .expirationReasonUpdated }
            let ids = changes.map(\.id)
            #expect(Set(ids).count == ids.count, "seed \(Self.seed): customer \(customer) reported an event twice")
            let got = changes.sorted(by: LifecycleEvent.chronological).map {
                "\($0.id)@\(Fixture.label($0.occurredAt))"
            }
            let want = oracle.map { "\($0.id)@\(Fixture.label($0.occurredAt))" }
            #expect(got == want, "seed \(Self.seed): customer \(customer)")
            if got != want { return }
            // Each EXPIRATION is a change of access at its instant, read from the facts signed by
            // then: the subscription gives access just before it and not at it.
            let facts = arrivals.map(\.fact)
            for expiration in oracle where expiration.type == .expiration {
                func active(at instant: Timestamp) -> Bool? {
                    EntitlementEngine.evaluate(
                        customerId: F.customer, environment: .production,
                        facts: facts.filter { F.signedDate(of: $0) <= instant }, catalog: F.catalog, now: instant
                    ).customerInfo.subscriptions[expiration.productId]?.isActive
                }
                let at = expiration.occurredAt
                #expect(active(at: at.adding(milliseconds: -1)) == true, "customer \(customer): \(expiration.id)")
                #expect(active(at: at) == false, "customer \(customer): \(expiration.id)")
            }
            expirations += oracle.filter { $0.type == .expiration }.count
        }
        // The scheduler did real work: many events came from time alone.
        #expect(scheduledChanges > 300)
        #expect(expirations > 200)
    }

    /// One customer's facts and when each arrives: up to two subscription chains.
    static func life(using random: inout SeededGenerator) -> (
        arrivals: [(fact: Fact, at: Timestamp)], horizon: Timestamp
    ) {
        var arrivals: [(fact: Fact, at: Timestamp)] = []
        var latest = 0.0
        func arrive(_ fact: Fact, at day: Double) { arrivals.append((fact, F.day(day))) }
        /// Notifications come on time, late, or never.
        func notify(_ fact: Fact, signed: Double, random: inout SeededGenerator) {
            let roll = Double.random(in: 0..<1, using: &random)
            if roll < 0.4 {
                arrive(fact, at: signed)
            } else if roll < 0.8 {
                arrive(fact, at: signed + Double(Int.random(in: 1...10, using: &random)) + 0.5)
            }
        }
        for chain in 0..<Int.random(in: 1...2, using: &random) {
            let original = "o\(chain)"
            let product = chain == 0 ? "monthly" : "news_monthly"
            var start = Double(Int.random(in: 0...10, using: &random))
            var reason: TransactionReason = .purchase
            var ended = false
            for period in 0..<Int.random(in: 1...5, using: &random) where !ended {
                let id = "\(original)-t\(period)"
                let end = start + 30
                arrive(F.tx(id, product, start, end, original: original, reason: reason), at: start)
                latest = max(latest, end)
                let roll = Double.random(in: 0..<1, using: &random)
                if roll < 0.4 {
                    // Renewed: Apple charges before the expiry.
                    reason = .renewal
                    start = end
                } else if roll < 0.6 {
                    // Auto-renew off, then EXPIRED/VOLUNTARY; maybe a resubscription later.
                    let off = start + Double(Int.random(in: 1...20, using: &random))
                    arrive(F.ri(product, signed: off, original: original, autoRenew: false), at: off)
                    notify(
                        F.note(.expired, .voluntary, signed: end + 0.01, original: original, product: product),
                        signed: end + 0.01, random: &random)
                    if random.chance(0.5) {
                        start = end + Double(Int.random(in: 5...40, using: &random))
                        reason = .purchase
                    } else {
                        ended = true
                    }
                } else if roll < 0.85 {
                    // The renewal fails at the expiry, with or without a grace period.
                    let grace: Double? = random.chance(0.6) ? end + Double(Int.random(in: 3...16, using: &random)) : nil
                    arrive(
                        F.ri(product, signed: end, original: original, retry: true, grace: grace, intent: 2), at: end)
                    notify(
                        F.note(
                            .didFailToRenew, grace == nil ? nil : .gracePeriod, signed: end, original: original,
                            product: product), signed: end, random: &random)
                    if random.chance(0.5) {
                        // Recovered during the retry (inside the grace period or after it).
                        start = end + Double(Int.random(in: 1...40, using: &random))
                        reason = .renewal
                    } else {
                        if let grace {
                            notify(
                                F.note(.gracePeriodExpired, signed: grace + 0.01, original: original, product: product),
                                signed: grace + 0.01, random: &random)
                        }
                        notify(
                            F.note(.expired, .billingRetry, signed: end + 60, original: original, product: product),
                            signed: end + 60, random: &random)
                        ended = true
                    }
                } else {
                    // Nothing more is ever heard: time alone ends access.
                    ended = true
                }
                if !ended { latest = max(latest, start) }
            }
        }
        return (arrivals, F.day(latest + 90))
    }
}
