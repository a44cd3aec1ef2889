import AppStoreModels
import Foundation
import Storage
import Testing

@testable import Entitlements
@testable import StorekeeperIngestion

/// The cached path of `CustomerStateUpdater` (decoded facts and state kept in a
/// `CustomerEvaluationCache`, state encoded by `CustomerInfoEncoding`) against a full
/// evaluation (every fact and the previous state decoded from the store, the state encoded by
/// `AppStoreJSON`): the same stored bytes and the same events, over random histories arriving
/// in random chunks, with rolled-back writes, a second instance writing the same customer, and
/// caches emptied at random. Seeded: set ENTITLEMENTS_SEED to replay a failure.
@Suite struct CachedEvaluationTests {
    static let seed = OrderIndependenceTests.seed ^ 0xCAC4E

    @Test func encodingReusingPartsIsAppStoreJSON() {
        var random = SeededGenerator(seed: Self.seed)
        for customer in 0..<200 {
            let (facts, now) = RandomCustomer.facts(using: &random)
            var known: [Fact] = []
            var previous: CustomerInfoEncoding?
            for fact in facts.shuffled(using: &random) {
                known.append(fact)
                let info = Fixture.evaluate(known, at: now).customerInfo
                let encoding = CustomerInfoEncoding(info, reusing: random.chance(0.8) ? previous : nil)
                #expect(
                    Data(encoding.json.utf8) == AppStoreJSON.foundationEncode(info),
                    "seed \(Self.seed): customer \(customer) encodes differently")
                previous = encoding
            }
        }
    }

    /// A cold customer's previous state is read as `PreviousEvaluation` alone: the same three
    /// fields as decoding the whole stored state.
    @Test func previousEvaluationReadsTheStoredStatesFields() throws {
        var random = SeededGenerator(seed: Self.seed ^ 0x2)
        var checked = 0
        for _ in 0..<100 {
            let (facts, now) = RandomCustomer.facts(using: &random)
            let info = Fixture.evaluate(facts, at: now).customerInfo
            let stored = Data(CustomerInfoEncoding(info, reusing: nil).json.utf8)
            let previous = try AppStoreJSON.decode(PreviousEvaluation.self, from: stored)
            #expect(previous == PreviousEvaluation(info))
            #expect(previous.eventIds == info.eventIds)
            checked += info.eventIds.count
        }
        #expect(checked > 100)
        #expect(throws: ModelDecodingError.self) {
            try AppStoreJSON.decode(
                PreviousEvaluation.self, from: Data(#"{"customerId":"a","environment":"Sandbox"}"#.utf8))
        }
    }

    @Test func cachedUpdatesMatchFullEvaluation() async throws {
        var random = SeededGenerator(seed: Self.seed ^ 0x1)
        let directory = try Self.temporaryDirectory("cached-evaluation")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Shared by every store: customer 1 of each store is a different history, so entries
        // must be checked against the store, not trusted.
        // One follows the purchases' stamps whatever the history's length, one only past 64 facts.
        let caches = [CustomerEvaluationCache(stampedFactCount: 0), CustomerEvaluationCache()]
        var comparedAnalytics = 0
        var knownTexts = 0
        for customer in 0..<40 {
            let (facts, nowDays) = RandomCustomer.facts(using: &random)
            let cached = try await Self.open(directory, "cached-\(customer)", facts: facts)
            let full = try await Self.open(directory, "full-\(customer)", facts: facts)
            var arrival = facts.shuffled(using: &random)
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                arrival.insert(
                    facts.randomElement(using: &random)!, at: Int.random(in: 0...arrival.count, using: &random))
            }
            var step = 0
            while !arrival.isEmpty {
                let chunk = Array(arrival.prefix(Int.random(in: 1...4, using: &random)))
                let now = Fixture.day(nowDays).adding(milliseconds: Int64(step))
                let environments: [AppStoreEnvironment] = random.chance(0.2) ? [.production, .sandbox] : [.production]
                let cache = caches[Int.random(in: 0...1, using: &random)]
                if random.chance(0.1) { cache.removeAll() }
                if random.chance(0.15) {
                    // Evaluated, then rolled back: nothing of it may leak into a later evaluation.
                    let parallelFactCount = random.chance(0.5) ? 0 : Int.max
                    let rememberedEventCount = random.chance(0.7) ? 0 : Int.max
                    _ = try? await cached.write { tx -> Int in
                        try Self.insert(chunk, in: tx)
                        for environment in environments {
                            try CustomerStateUpdater.update(
                                customer: try tx.lockCustomer(id: 1), environment: environment, in: tx, now: now,
                                cache: cache, parallelFactCount: parallelFactCount,
                                rememberedEventCount: rememberedEventCount)
                        }
                        throw StoreError(.database, "rolled back on purpose")
                    }
                    step += 1
                    continue
                }
                arrival.removeFirst(chunk.count)
                // On one thread or on two (state and analytics side by side): the same result.
                // The standing events' texts remembered with the state (most steps) or not: the
                // next evaluation then writes the events without reading them back.
                let parallelFactCount = random.chance(0.5) ? 0 : Int.max
                let rememberedEventCount = random.chance(0.7) ? 0 : Int.max
                let knownBefore = caches.map { $0.knownEventTexts.load(ordering: .relaxed) }.reduce(0, +)
                try await cached.write { tx in
                    try Self.insert(chunk, in: tx)
                    for environment in environments {
                        try CustomerStateUpdater.update(
                            customer: try tx.lockCustomer(id: 1), environment: environment, in: tx, now: now,
                            cache: cache, parallelFactCount: parallelFactCount,
                            rememberedEventCount: rememberedEventCount)
                    }
                }
                try await full.write { tx in
                    try Self.insert(chunk, in: tx)
                    for environment in environments {
                        try Self.fullUpdate(environment: environment, in: tx, now: now)
                    }
                }
                knownTexts += caches.map { $0.knownEventTexts.load(ordering: .relaxed) }.reduce(0, +) - knownBefore
                let expected = try await Self.observable(full)
                let actual = try await Self.observable(cached)
                #expect(
                    actual.states == expected.states,
                    "seed \(Self.seed): customer \(customer) step \(step): stored state differs")
                if !expected.analytics.isEmpty { comparedAnalytics += 1 }
                #expect(
                    actual.analytics == expected.analytics,
                    "seed \(Self.seed): customer \(customer) step \(step): analytics differ")
                #expect(
                    actual.cohorts == expected.cohorts,
                    "seed \(Self.seed): customer \(customer) step \(step): cohorts differ")
                let firstDifference = zip(actual.events, expected.events).first { $0 != $1 }.map { $0.0.id }
                #expect(
                    actual.events == expected.events,
                    """
                    seed \(Self.seed): customer \(customer) step \(step): events differ \
                    (\(actual.events.count) vs \(expected.events.count), first at \(firstDifference ?? "the end"))
                    """)
                step += 1
            }
            await cached.close()
            await full.close()
        }
        #expect(comparedAnalytics > 40)
        // The path that knows the events' texts was taken often enough to be tried.
        #expect(knownTexts > 40)
    }

    /// The facts the cache hands out are the stored facts in stored order, with new facts
    /// among the transactions, the renewals and the notifications already known, after a
    /// rolled-back write, with the cache emptied, and after another store's customer 1: random
    /// histories arriving in random chunks. The engine does not depend on the order (the
    /// suite above cannot see it), so it is checked here, against `facts(customerId:)`.
    @Test func handedOutFactsAreTheStoredOnesInOrder() async throws {
        var random = SeededGenerator(seed: Self.seed ^ 0x3)
        let directory = try Self.temporaryDirectory("cached-facts")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = CustomerEvaluationCache(stampedFactCount: 0)
        var compared = 0
        for customer in 0..<30 {
            let (facts, _) = RandomCustomer.facts(using: &random)
            let store = try await Self.open(directory, "facts-\(customer)", facts: facts)
            var arrival = facts.shuffled(using: &random)
            while !arrival.isEmpty {
                let chunk = Array(arrival.prefix(Int.random(in: 1...4, using: &random)))
                let rollBack = random.chance(0.15)
                if random.chance(0.05) { cache.removeAll() }
                let outcome: (handed: [Fact], stored: [Fact])
                do {
                    outcome = try await store.write { tx -> (handed: [Fact], stored: [Fact]) in
                        try Self.insert(chunk, in: tx)
                        let handed = try cache.facts(customerId: 1, in: tx)
                        let stored = try tx.facts(customerId: 1)
                        if rollBack { throw StoreError(.database, Self.rolledBack) }
                        return (handed, stored)
                    }
                } catch let error as StoreError where rollBack && error.detail == Self.rolledBack {
                    continue
                }
                #expect(
                    Self.firstDifference(outcome.handed, outcome.stored) == nil,
                    "seed \(Self.seed): customer \(customer): \(Self.firstDifference(outcome.handed, outcome.stored)!)")
                arrival.removeFirst(chunk.count)
                compared += 1
            }
            let afterwards = try await store.read { reader in
                (try cache.facts(customerId: 1, in: reader), try reader.facts(customerId: 1))
            }
            #expect(
                Self.firstDifference(afterwards.0, afterwards.1) == nil,
                "seed \(Self.seed): customer \(customer) afterwards: \(Self.firstDifference(afterwards.0, afterwards.1)!)"
            )
            await store.close()
        }
        #expect(compared > 100)
    }

    /// The standing events' texts remembered with a state are used only for that state's text
    /// at that version. An evaluation rolled back at the same instant as the committed one, whose
    /// fact changed an event but not the state, remembered the same text at the next version:
    /// its texts must not be used, or the event it changed would never be written when the
    /// fact comes again. Any evaluation of the customer, in either environment, forgets the
    /// texts of the others (events are the customer's).
    @Test func rememberedEventTextsNeedTheStatesTextAndVersion() async throws {
        let directory = try Self.temporaryDirectory("event-texts")
        defer { try? FileManager.default.removeItem(at: directory) }
        let facts = (0..<12).map { Fixture.tx("t\($0)", "monthly", Double($0 * 30), Double($0 * 30 + 30)) }
        let store = try await Self.open(directory, "texts", facts: facts)
        let cache = CustomerEvaluationCache()
        let now = Fixture.day(400)
        func known() async throws -> [String: String]? {
            try await store.read { reader in
                try cache.previousState(customerId: 1, environment: .production, in: reader)?.eventTexts
            }
        }
        let committed = try await store.write { tx in
            try Self.insert(facts, in: tx)
            return try CustomerStateUpdater.update(
                customer: try tx.lockCustomer(id: 1), environment: .production, in: tx, now: now, cache: cache,
                rememberedEventCount: 0)
        }
        let texts = try #require(try await known())
        #expect(texts.count >= 12, "\(texts.count) texts")

        // As the rolled-back evaluation at the same instant left it: the stored state's very
        // text, other texts, the version after the stored one.
        let stored = try #require(try await store.read { try $0.customerInfo(customerId: 1, environment: .production) })
        #expect(stored.version == committed.version)
        let encoding = CustomerInfoEncoding(stored.info, reusing: nil)
        let bogus = texts.mapValues { _ in "{}" }
        cache.remember(stored.info, encoding: encoding, customerId: 1, eventTexts: bogus, version: stored.version + 1)
        #expect(try await known() == nil)
        // The same at the stored version: known (the texts are the cache's to trust, not checked).
        cache.remember(stored.info, encoding: encoding, customerId: 1, eventTexts: bogus, version: stored.version)
        #expect(try await known() == bogus)

        // An evaluation in the other environment forgets them.
        try await store.write { tx in
            try CustomerStateUpdater.update(
                customer: try tx.lockCustomer(id: 1), environment: .sandbox, in: tx, now: now, cache: cache,
                rememberedEventCount: 0)
        }
        #expect(try await known() == nil)
    }

    /// Known rows are found by their table and row id, but reused only for the bytes they
    /// came from: a renewal info rewritten in place (another snapshot of the same instant that
    /// wins keeps the row and its id) is decoded again, and the facts handed out then are those
    /// stored; facts added before, among and after the known ones take their places.
    @Test func aRowRewrittenInPlaceIsDecodedAgain() async throws {
        let directory = try Self.temporaryDirectory("cached-rewrite")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = Fixture.tx("t1", "monthly", 0, 30)
        let losing = Fixture.ri("monthly", signed: 1, next: "annual")
        let winning = Fixture.ri("monthly", signed: 1, next: "monthly")
        let notification = Fixture.note(.didRenew, signed: 30)
        let second = Fixture.tx("t2", "monthly", 30, 60)
        let store = try await Self.open(
            directory, "rewrite", facts: [first, losing, winning, notification, second])
        let cache = CustomerEvaluationCache()
        func handedAndStored(inserting facts: [Fact]) async throws -> (handed: [Fact], stored: [Fact]) {
            try await store.write { tx in
                try Self.insert(facts, in: tx)
                return (try cache.facts(customerId: 1, in: tx), try tx.facts(customerId: 1))
            }
        }
        // Two snapshots of one instant: the row keeps the greater text (they differ only in
        // `autoRenewProductId`, "annual" < "monthly"), so the second rewrites the first's row.
        let initial = try await handedAndStored(inserting: [losing, notification])
        #expect(initial.handed == [losing, notification])
        #expect(initial.stored == initial.handed)
        let rewritten = try await handedAndStored(inserting: [winning])
        #expect(rewritten.stored == [winning, notification])
        #expect(rewritten.handed == rewritten.stored)
        // New rows before (a transaction: the first table), and after the known ones.
        let grown = try await handedAndStored(inserting: [first, second])
        #expect(grown.stored == [first, second, winning, notification])
        #expect(grown.handed == grown.stored)
        await store.close()
    }

    static let rolledBack = "rolled back on purpose"

    /// A new directory for a test's stores (the test removes it).
    static func temporaryDirectory(_ name: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "storekeeper-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Where two fact lists first differ, in words (nil when equal): a failure printing both
    /// lists in full would be unreadable.
    static func firstDifference(_ handed: [Fact], _ stored: [Fact]) -> String? {
        for index in 0..<min(handed.count, stored.count) where handed[index] != stored[index] {
            return "\(handed.count) facts handed out, \(stored.count) stored, first difference at \(index)"
        }
        return handed.count == stored.count ? nil : "\(handed.count) facts handed out, \(stored.count) stored"
    }

    /// What an ingestion leaves for others to see: the stored state JSON per environment and
    /// the appended events in order.
    static func observable(_ store: SQLiteStore) async throws -> (
        states: [String?], events: [LifecycleEvent], analytics: [AnalyticsDailyRow], cohorts: AnalyticsCohortRows
    ) {
        try await store.read { reader in
            (
                try AppStoreEnvironment.allCases.map {
                    try reader.customerInfoJSON(customerId: 1, environment: $0)?.json
                },
                try reader.events(customerId: 1, after: nil, limit: 100_000).map(\.event),
                try reader.analyticsRows(appId: "app"), try reader.analyticsCohortRows(appId: "app")
            )
        }
    }

    /// The updater as it was before the cache: decode everything, encode everything.
    static func fullUpdate(environment: AppStoreEnvironment, in tx: any StoreTransaction, now: Timestamp) throws {
        let customer = try tx.lockCustomer(id: 1)
        let previous = try tx.customerInfo(customerId: customer.id, environment: environment)
        let evaluation = EntitlementEngine.evaluate(
            customerId: customer.appUserId, environment: environment, facts: try tx.facts(customerId: customer.id),
            catalog: try tx.catalog(appId: customer.appId) ?? ProductCatalog(products: []), now: now,
            previous: previous?.info)
        _ = try tx.saveCustomerInfo(
            evaluation.customerInfo, customerId: customer.id, expectedVersion: previous?.version, at: now)
        // As `CustomerStateUpdater.update`: retractions (each with its correction), then new events.
        let retracted = try tx.retractEvents(ids: evaluation.retractedEventIds, customerId: customer.id, at: now)
        _ = try tx.appendEvents(
            retracted.map { LifecycleEvent.retraction(of: $0.event, at: now) }, customerId: customer.id, at: now)
        let appended = try tx.appendEvents(evaluation.newEvents, customerId: customer.id, at: now)
        let fresh = Set(appended.map(\.event.id))
        try tx.reviseEvents(evaluation.allEvents.filter { !fresh.contains($0.id) }, customerId: customer.id)
        // Analytics as before they were worked out together: figures and cohorts apart.
        let facts = try tx.facts(customerId: customer.id)
        let catalog = try tx.catalog(appId: customer.appId) ?? ProductCatalog(products: [])
        let figures = AnalyticsContribution.figures(
            facts: facts, environment: environment, catalog: catalog, rule: CommissionRule(), now: now)
        try tx.applyAnalyticsContribution(
            customerId: customer.id, appId: customer.appId, environment: environment, figures.daily)
        try tx.applyAnalyticsPeriods(
            customerId: customer.id, appId: customer.appId, environment: environment, figures.periods)
        try tx.applyAnalyticsCohorts(
            customerId: customer.id, appId: customer.appId, environment: environment,
            CohortContribution.of(facts: facts, environment: environment, catalog: catalog, rule: CommissionRule()))
    }

    static func open(_ directory: URL, _ name: String, facts: [Fact]) async throws -> SQLiteStore {
        let store = try await SQLiteStore.open(path: directory.appendingPathComponent("\(name).sqlite").path)
        let start = Fixture.day(0)
        try await store.write { tx in
            try tx.saveApp(
                AppRecord(id: "app", bundleId: "com.example", environments: [.production, .sandbox]), at: start)
            try tx.saveCatalog(appId: "app", Fixture.catalog, at: start)
            let customer = try tx.ensureCustomer(appId: "app", appUserId: Fixture.customer, at: start)
            precondition(customer.id == 1)
            for original in Set(facts.compactMap(Self.originalTransactionId)).sorted() {
                try tx.claimOriginalTransaction(original, customerId: customer.id, at: start)
            }
        }
        return store
    }

    static func originalTransactionId(_ fact: Fact) -> String? {
        switch fact {
        case .transaction(let value): value.originalTransactionId
        case .renewalInfo(let value): value.originalTransactionId
        case .notification(let value): value.originalTransactionId
        case .playSubscription, .playProductPurchase, .playVoidedPurchase, .playOrder: nil
        }
    }

    static func insert(_ facts: [Fact], in tx: any StoreTransaction) throws {
        let at = Fixture.day(0)
        for fact in facts {
            switch fact {
            case .transaction(let value):
                _ = try tx.insertTransaction(
                    NewTransaction(appId: "app", jws: nil, fact: value, source: "test", receivedAt: at))
            case .renewalInfo(let value):
                _ = try tx.insertRenewalInfo(
                    NewRenewalInfo(appId: "app", jws: nil, fact: value, source: "test", receivedAt: at))
            case .notification(let value):
                _ = try tx.insertNotification(
                    NewNotification(
                        appId: "app", notificationUUID: value.notificationId, type: value.type,
                        subtype: value.subtype, environment: value.environment,
                        originalTransactionId: value.originalTransactionId, signedDate: value.signedDate,
                        signedPayload: "test", fact: value, receivedAt: at))
            case .playSubscription, .playProductPurchase, .playVoidedPurchase, .playOrder:
                Issue.record("these tests use App Store facts only")
            }
        }
    }
}
