import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage
@testable import StorekeeperBench

private typealias F = IngestionFixture

/// What a customer's re-evaluation writes besides its state, done incrementally (issue 10's
/// worst case: a long history must not cost its whole length per new fact): the daily
/// contribution reuses what it decoded and encoded before, periods and events are rewritten
/// only where they changed. Each must store exactly what writing everything afresh stores,
/// whatever was cached, rolled back or written behind the cache's back.
extension StoreConformanceTests {
    static func key(_ day: Int, product: String = "monthly") -> AnalyticsDailyKey {
        AnalyticsDailyKey(
            day: CalendarDay(year: 2026, month: 1, day: day), productId: product, subscriptionGroup: "premium",
            storefront: "USA", currency: "USD")
    }

    static func measures(gross: Int64, transactions: Int64 = 1) -> AnalyticsMeasures {
        var measures = AnalyticsMeasures()
        measures.gross = gross
        measures.transactions = transactions
        return measures
    }

    /// Sets the fixture's app up in `store` and adds its first customer, `appUserId`.
    static func firstCustomer(_ store: any Store, _ appUserId: String) async throws -> Int64 {
        try await F.setUp(store)
        return try await store.write { tx in
            try tx.ensureCustomer(appId: F.appId, appUserId: appUserId, at: F.now).id
        }
    }

    /// The stored contribution text as it is, spaces after the value included (`keepingStoredSize`).
    static func storedContributionText(_ store: any Store, customerId: Int64) async throws -> String? {
        try await store.read { reader in
            try (reader as! SQLStoreTransaction).row(
                "SELECT contribution_json FROM analytics_contributions WHERE customer_id = $1 AND environment = $2",
                .integer(customerId), .text("Production"))?.text(0)
        }
    }

    /// The stored contribution (its text without the spaces a long one is padded with on
    /// SQLite) and the app's daily rows.
    static func contributionState(_ store: any Store, customerId: Int64) async throws
        -> (text: String?, rows: [AnalyticsDailyKey: AnalyticsMeasures])
    {
        let stored = try await storedContributionText(store, customerId: customerId)
        let text = stored.map { text in
            var end = text.utf8.endIndex
            while end > text.utf8.startIndex, text.utf8[text.utf8.index(before: end)] == UInt8(ascii: " ") {
                end = text.utf8.index(before: end)
            }
            return String(text[..<end])
        }
        return try await store.read { reader in
            let rows = try reader.analyticsRows(appId: F.appId).filter { !$0.measures.isZero }
            // Rows whose keys are equal strings in different bytes (Unicode spellings) are two
            // rows to the database: the test fails on them instead of the dictionary trapping.
            let byKey = Dictionary(rows.map { ($0.key, $0.measures) }, uniquingKeysWith: { first, _ in first })
            #expect(byKey.count == rows.count, "two daily rows under one key")
            return (text, byKey)
        }
    }

    /// What writing the contribution afresh stores: every non-zero entry in key order.
    static func canonicalText(_ contribution: [AnalyticsDailyKey: AnalyticsMeasures]) -> String {
        SQLStoreTransaction.jsonText(
            contribution.filter { !$0.value.isZero }.sorted { $0.key < $1.key }.map {
                SQLStoreTransaction.StoredContribution(key: $0.key, values: $0.value.values)
            })
    }

    @Test(
        "a contribution is stored as written afresh; a rolled-back or foreign text is not believed",
        arguments: Backend.enabled)
    func contributionCacheIsCheckedByContent(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let customerId = try await Self.firstCustomer(store, "ann")
            func apply(_ contribution: [AnalyticsDailyKey: AnalyticsMeasures]) async throws -> Bool {
                try await store.write { tx in
                    try tx.applyAnalyticsContribution(
                        customerId: customerId, appId: F.appId, environment: .production, contribution)
                }
            }
            let first = [Self.key(1): Self.measures(gross: 9990), Self.key(2): Self.measures(gross: 4990)]
            #expect(try await apply(first))
            var state = try await Self.contributionState(store, customerId: customerId)
            #expect(state.text == Self.canonicalText(first))
            #expect(state.rows == first)

            // One entry changed, one kept (its text reused), one new, one zero (left out).
            let second = [
                Self.key(1): Self.measures(gross: 8990), Self.key(2): Self.measures(gross: 4990),
                Self.key(3): Self.measures(gross: 1000), Self.key(4): AnalyticsMeasures(),
            ]
            #expect(try await apply(second))
            #expect(try await apply(second) == false, "the same contribution again changes nothing")
            state = try await Self.contributionState(store, customerId: customerId)
            #expect(state.text == Self.canonicalText(second))
            #expect(state.rows == second.filter { !$0.value.isZero })

            // A write that rolls back after applying: the cache saw its text, the store did not.
            let doomed = [Self.key(1): Self.measures(gross: 1)]
            await #expect(throws: Planted.self) {
                try await store.write { tx in
                    _ = try tx.applyAnalyticsContribution(
                        customerId: customerId, appId: F.appId, environment: .production, doomed)
                    throw Planted()
                }
            }
            let third = [Self.key(2): Self.measures(gross: 4990), Self.key(5): Self.measures(gross: 700)]
            #expect(try await apply(third))
            state = try await Self.contributionState(store, customerId: customerId)
            #expect(state.text == Self.canonicalText(third))
            #expect(state.rows == third, "the difference is taken from the stored text, not the rolled-back one")

            // Another writer (another instance) replaced the text: it is decoded, not the cache's.
            let foreign = [Self.key(6): Self.measures(gross: 300)]
            try await store.write { tx in
                let sql = tx as! SQLStoreTransaction
                _ = try sql.execute(
                    "UPDATE analytics_contributions SET contribution_json = $1 WHERE customer_id = $2",
                    .text(Self.canonicalText(foreign)), .integer(customerId))
            }
            #expect(try await apply(third))
            state = try await Self.contributionState(store, customerId: customerId)
            #expect(state.text == Self.canonicalText(third))
            // The rows took third − foreign on top of third: the foreign entry's day went negative,
            // as a daily row does when a contribution is replaced behind the rows' back.
            #expect(state.rows[Self.key(6)]?.gross == -300)
            #expect(state.rows[Self.key(5)]?.gross == 1400)

            #expect(try await apply([:]))
            state = try await Self.contributionState(store, customerId: customerId)
            #expect(state.text == nil)
        }
    }

    @Test(
        "successive random contributions: each stored as written afresh, the rows their last one",
        arguments: Backend.enabled)
    func randomContributionsWalkLikeLookups(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let customerId = try await Self.firstCustomer(store, "ann")
            // Keys of one day that differ only past the day and product, where the walk compares
            // every field; "é" twice (precomposed, combining) is one key.
            var space: [AnalyticsDailyKey] = []
            for day in 1...4 {
                for storefront in ["USA", "FRA", "\u{e9}"] {
                    for currency in ["USD", "EUR"] {
                        space.append(
                            AnalyticsDailyKey(
                                day: CalendarDay(year: 2026, month: 1, day: day), productId: "monthly",
                                subscriptionGroup: "premium", storefront: storefront, currency: currency))
                    }
                }
                space.append(Self.key(day, product: "annual"))
            }
            var random = AnalyticsPeriodChangesTests.Generator(state: 0xC0_47B1)
            var changes = 0
            var previous: [AnalyticsDailyKey: AnalyticsMeasures] = [:]
            var storedText: String?
            for round in 0..<40 {
                var contribution: [AnalyticsDailyKey: AnalyticsMeasures] = [:]
                for key in space where Int.random(in: 0..<3, using: &random) > 0 {
                    // Often what the round before had, so that kept entries reuse their text.
                    contribution[key] =
                        Bool.random(using: &random)
                        ? previous[key] ?? AnalyticsMeasures()
                        : Self.measures(gross: Int64.random(in: 0...2, using: &random) * 1000)
                }
                if round % 13 == 12 {
                    // The "é" entries under the other spelling with the same measures, one other
                    // entry changed: the "é" entries keep their stored (precomposed) text.
                    // Both lists made outside `#expect`: a closure inside the macro's argument once
                    // took the place of the next statement's closure (Swift 6.3.1, Linux, debug build).
                    let accented = previous.keys.filter { $0.storefront == "\u{e9}" }
                    let other = previous.keys.filter { $0.storefront != "\u{e9}" }.min()
                    #expect(!accented.isEmpty, "round \(round)")
                    #expect(other != nil, "round \(round)")
                    contribution = Dictionary(
                        uniqueKeysWithValues: previous.map { key, measures in
                            (
                                Self.respelled(key, as: "e\u{301}"),
                                key == other ? measures + Self.measures(gross: 1, transactions: 0) : measures
                            )
                        })
                }
                let applied = contribution
                let changed = try await store.write { tx in
                    try tx.applyAnalyticsContribution(
                        customerId: customerId, appId: F.appId, environment: .production, applied)
                }
                let expected = contribution.filter { !$0.value.isZero }
                #expect(changed == (expected != previous), "round \(round)")
                let state = try await Self.contributionState(store, customerId: customerId)
                if changed {
                    changes += 1
                    // What was stored before is precomposed, and kept: the text is the one written
                    // afresh with that spelling.
                    storedText =
                        expected.isEmpty
                        ? nil
                        : Self.canonicalText(
                            Dictionary(
                                uniqueKeysWithValues: expected.map { (Self.respelled($0.key, as: "\u{e9}"), $0.value) })
                        )
                }
                #expect(state.text == storedText, "round \(round)")
                #expect(state.rows == expected, "round \(round)")
                previous = expected
            }
            #expect(changes > 20)

            // A text another writer stored with a key twice and out of order is decoded and added
            // up before the walk: the rows take the new contribution less that sum.
            let (first, second) = (space[0], space[5])
            let foreign = [
                SQLStoreTransaction.StoredContribution(key: second, values: Self.measures(gross: 70).values),
                SQLStoreTransaction.StoredContribution(key: first, values: Self.measures(gross: 5).values),
                SQLStoreTransaction.StoredContribution(key: second, values: Self.measures(gross: 30).values),
            ]
            try await store.write { tx in
                _ = try (tx as! SQLStoreTransaction).execute(
                    "UPDATE analytics_contributions SET contribution_json = $1 WHERE customer_id = $2",
                    .text(SQLStoreTransaction.jsonText(foreign)), .integer(customerId))
            }
            let last = [first: Self.measures(gross: 5), space[9]: Self.measures(gross: 9)]
            #expect(
                try await store.write { tx in
                    try tx.applyAnalyticsContribution(
                        customerId: customerId, appId: F.appId, environment: .production, last)
                })
            var rows = previous
            for (key, measures) in last { rows[key] = (rows[key] ?? AnalyticsMeasures()) + measures }
            rows[first] = rows[first]! - Self.measures(gross: 5)
            rows[second] = (rows[second] ?? AnalyticsMeasures()) - Self.measures(gross: 100, transactions: 2)
            let state = try await Self.contributionState(store, customerId: customerId)
            #expect(state.text == Self.canonicalText(last))
            #expect(state.rows == rows.filter { !$0.value.isZero })
        }
    }

    /// `key` with an "é" storefront spelled `spelling` (the two spellings are equal strings).
    static func respelled(_ key: AnalyticsDailyKey, as spelling: String) -> AnalyticsDailyKey {
        var respelled = key
        if key.storefront == "\u{e9}" { respelled.storefront = spelling }
        return respelled
    }

    @Test(
        "a cohort contribution is kept decoded, but a rolled-back or foreign text is not believed",
        arguments: Backend.enabled)
    func cohortContributionCacheIsCheckedByContent(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let customerId = try await Self.firstCustomer(store, "ann")
            @Sendable func cohorts(_ subscriptions: Int64, renewals: Int64 = 0) -> CohortContribution {
                CohortContribution(retention: [
                    RetentionCohortKey(
                        cohortMonth: CalendarDay(daysSince1970: 20_000), productId: "p", subscriptionGroup: "g",
                        storefront: "USA", paidRenewals: renewals): subscriptions
                ])
            }
            func apply(_ contribution: CohortContribution) async throws -> Bool {
                try await store.write { tx in
                    try tx.applyAnalyticsCohorts(
                        customerId: customerId, appId: F.appId, environment: .production, contribution)
                }
            }
            func stored() async throws -> String? {
                try await store.read { reader in
                    try (reader as! SQLStoreTransaction).connection.query(
                        "SELECT contribution_json FROM analytics_cohort_contributions WHERE customer_id = $1",
                        [.integer(customerId)]
                    ).first?.text(0)
                }
            }
            #expect(try await apply(cohorts(1)))
            #expect(try await apply(cohorts(1)) == false, "the same contribution again changes nothing")
            // A write that rolls back after applying: the cache saw its text, the store did not.
            await #expect(throws: Planted.self) {
                try await store.write { tx in
                    _ = try tx.applyAnalyticsCohorts(
                        customerId: customerId, appId: F.appId, environment: .production, cohorts(2))
                    throw Planted()
                }
            }
            #expect(try await apply(cohorts(1)) == false, "the stored text is still the first one")
            // Another writer replaced the text: what it holds is compared, not the cache's.
            let foreign = SQLStoreTransaction.StoredCohortContribution(cohorts(1, renewals: 5))
            try await store.write { tx in
                _ = try (tx as! SQLStoreTransaction).execute(
                    "UPDATE analytics_cohort_contributions SET contribution_json = $1 WHERE customer_id = $2",
                    .text(SQLStoreTransaction.jsonText(foreign)), .integer(customerId))
            }
            #expect(try await apply(cohorts(1)))
            #expect(
                try await stored()
                    == SQLStoreTransaction.jsonText(SQLStoreTransaction.StoredCohortContribution(cohorts(1))))
            #expect(try await apply(CohortContribution()))
            #expect(try await stored() == nil)
        }
    }

    @Test("periods: only changed ones are rewritten, the stored set is the new one", arguments: Backend.enabled)
    func periodsAreRewrittenWhereTheyChanged(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let customerId = try await Self.firstCustomer(store, "ann")
            func period(_ id: String, start: Int64, gross: Int64 = 9990) -> AnalyticsPeriod {
                AnalyticsPeriod(
                    transactionId: id, subscription: "premium", productId: "monthly", subscriptionGroup: "premium",
                    storefront: "USA", currency: "USD", activity: .paid, start: F.at(start), end: F.at(start + 30),
                    mrrGross: gross, mrrProceeds: gross * 7 / 10, run: nil)
            }
            /// Whether the call changed anything, and the stored periods as "id=gross" in id order.
            func apply(_ periods: [AnalyticsPeriod]) async throws -> (Bool, [String]) {
                try await store.write { tx in
                    let changed = try tx.applyAnalyticsPeriods(
                        customerId: customerId, appId: F.appId, environment: .production, periods)
                    let stored = try (tx as! SQLStoreTransaction).rows(
                        "SELECT transaction_id, mrr_gross FROM analytics_periods WHERE customer_id = $1 ORDER BY 1",
                        .integer(customerId)
                    ).map { row throws(StoreError) in "\(try row.text(0))=\(try row.integer(1))" }
                    return (changed, stored)
                }
            }
            func rendered(_ periods: [AnalyticsPeriod]) -> [String] {
                periods.sorted { $0.transactionId < $1.transactionId }.map { "\($0.transactionId)=\($0.mrrGross)" }
            }
            let initial = (0..<5).map { period("t\($0)", start: Int64($0) * 30) }
            var (changed, stored) = try await apply(initial)
            #expect(changed)
            #expect(stored == rendered(initial))
            // One period changed, one removed, one added, the rest kept.
            var next = initial
            next[1] = period("t1", start: 30, gross: 4990)
            next.remove(at: 3)
            next.append(period("t5", start: 150))
            (changed, stored) = try await apply(next.reversed())
            #expect(changed)
            #expect(stored == rendered(next))
            #expect(stored == ["t0=9990", "t1=4990", "t2=9990", "t4=9990", "t5=9990"])
            (changed, _) = try await apply(next)
            #expect(changed == false)
            // Ids with dots and dashes (Play order ids): the database's collation may order them
            // otherwise than Swift; the same set again is still no change.
            let dotted = ["GPA.1-2..0", "GPA.12", "GPA.1.2", "a-b", "ab", "a.c"].enumerated().map {
                period($0.element, start: Int64($0.offset) * 30)
            }
            (changed, _) = try await apply(dotted)
            #expect(changed)
            (changed, _) = try await apply(dotted.shuffled())
            #expect(changed == false)
            (changed, stored) = try await apply([])
            #expect(changed)
            #expect(stored == [])
        }
    }

    @Test(
        "a long contribution keeps its stored size on SQLite: a change near its end writes a page or two to the log",
        arguments: Backend.enabled)
    func longContributionKeepsItsStoredSize(backend: Backend) async throws {
        try await withStore(backend) { store, database in
            let customerId = try await Self.firstCustomer(store, "long")
            func key(_ day: Int) -> AnalyticsDailyKey {
                AnalyticsDailyKey(
                    day: CalendarDay(year: 2020, month: 1, day: 1).adding(days: Int64(day)), productId: "monthly",
                    subscriptionGroup: "premium", storefront: "USA", currency: "USD")
            }
            var contribution: [AnalyticsDailyKey: AnalyticsMeasures] = [:]
            for day in 0..<300 { contribution[key(day)] = Self.measures(gross: 9_990 + Int64(day)) }
            func apply() async throws -> String {
                let applied = contribution
                let changed = try await store.write { tx in
                    try tx.applyAnalyticsContribution(
                        customerId: customerId, appId: F.appId, environment: .production, applied)
                }
                #expect(changed)
                let (value, rows) = try await Self.contributionState(store, customerId: customerId)
                #expect(rows == applied)
                // The value is what writing it afresh gives; only spaces follow it.
                #expect(value == Self.canonicalText(applied))
                return try #require(try await Self.storedContributionText(store, customerId: customerId))
            }
            let first = try await apply()
            let size = Self.canonicalText(contribution).utf8.count
            #expect(size > SQLStoreTransaction.paddedContributionBytes)
            #expect(first.utf8.count == (backend == .sqlite ? (size + size / 8 + 1_024 + 4_095) / 4_096 * 4_096 : size))

            // A new day and a change to the last one: the same size, and on SQLite a commit that
            // writes far fewer pages than the text takes (rewritten, it writes all of them).
            contribution[key(300)] = Self.measures(gross: 1)
            contribution[key(299)] = Self.measures(gross: 2)
            let before = backend == .sqlite ? try WriteAheadLogCommits(path: database.url + "-wal").frames.count : 0
            let second = try await apply()
            #expect(second.utf8.count == first.utf8.count || backend == .postgres)
            if backend == .sqlite {
                let log = try WriteAheadLogCommits(path: database.url + "-wal")
                #expect(log.frames.count == before + 1)
                #expect(try #require(log.frames.last) < size / 4_096 / 2)
            }

            // Much shorter: padded afresh to its own size, not kept at the long one's.
            contribution = contribution.filter { $0.key.day < key(20).day }
            let third = try await apply()
            let shortSize = Self.canonicalText(contribution).utf8.count
            #expect(third.utf8.count == shortSize || backend == .sqlite)
            #expect(third.utf8.count < first.utf8.count / 4)
        }
    }

    @Test("the contribution cache keeps to its byte budget and leaves out what is too large")
    func contributionCacheKeepsToItsBudget() {
        let cache = AnalyticsContributionCache.make(byteBudget: 8_000)
        func remember(_ size: Int, for key: AnalyticsContributionCache.Key) {
            cache.remember(.init(), text: String(repeating: "x", count: size), for: key)
        }
        for id in 0..<20 {
            remember(900, for: .init(customerId: Int64(id), environment: "Production"))
            #expect(cache.keptBytes <= 8_000)
        }
        #expect(
            cache.value(.init(customerId: 19, environment: "Production"), text: String(repeating: "x", count: 900))
                != nil)
        remember(1_001, for: .init(customerId: 19, environment: "Production"))
        #expect(
            cache.value(.init(customerId: 19, environment: "Production"), text: String(repeating: "x", count: 1_001))
                == nil)
        #expect(
            cache.value(.init(customerId: 19, environment: "Production"), text: String(repeating: "x", count: 900))
                == nil)
        let kept = cache.keptBytes
        remember(500, for: .init(customerId: 100, environment: "Production"))
        #expect(cache.keptBytes == kept + 500)
        cache.forget(.init(customerId: 100, environment: "Production"))
        #expect(cache.keptBytes == kept)
    }
    @Test("a decoded catalog or analytics setting is reused only for the very text read, whoever wrote it")
    func decodedTextCacheReusesOnlyTheSameText() throws {
        let cache = StoredTextCache<String, Int>(byteBudget: 16 << 20, capacity: 2)
        var decoded = 0
        func value(_ key: String, _ text: String) throws -> Int {
            try cache.value(key, text: text) { text throws(StoreError) in
                decoded += 1
                return text.count
            }
        }
        #expect(try value("a", "xx") == 2)
        #expect(try value("a", "xx") == 2)
        #expect(decoded == 1)
        #expect(try value("a", "xyz") == 3)
        #expect(decoded == 2)
        // Canonically equal, different bytes: decoded afresh.
        #expect(try value("b", "\u{E9}") == 1)
        #expect(try value("b", "e\u{301}") == 1)
        #expect(decoded == 4)
        // Full: a new key starts it over.
        _ = try value("c", "c")
        #expect(decoded == 5)
        _ = try value("a", "xyz")
        #expect(decoded == 6)
        // Bytes: a text over an eighth of the budget is never kept; past the budget it starts over.
        let small = StoredTextCache<String, Int>(byteBudget: 80, capacity: 100)
        var smallDecoded = 0
        func smallValue(_ key: String, _ text: String) throws -> Int {
            try small.value(key, text: text) { text throws(StoreError) in
                smallDecoded += 1
                return text.count
            }
        }
        _ = try smallValue("big", String(repeating: "b", count: 11))
        _ = try smallValue("big", String(repeating: "b", count: 11))
        #expect(smallDecoded == 2)
        #expect(small.keptBytes == 0)
        for index in 0..<8 { _ = try smallValue("k\(index)", String(repeating: "k", count: 10)) }
        #expect(small.keptBytes == 80)
        _ = try smallValue("k0", String(repeating: "k", count: 10))
        #expect(smallDecoded == 10)
        _ = try smallValue("k0", String(repeating: "j", count: 10))
        #expect(small.keptBytes == 80)
        _ = try smallValue("k8", "k")
        #expect(small.keptBytes == 1)
    }

    @Test(arguments: Backend.enabled)
    func catalogAndSettingsChangedBehindTheCacheAreReadAsStored(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let now = Timestamp(millisecondsSince1970: 1_767_225_600_000)
            _ = try await store.write { tx in
                try tx.saveApp(
                    AppRecord(id: "cache-app", bundleId: "com.example.cache", environments: [.production]), at: now)
            }
            for products in [["a"], ["a", "b"], ["c"]] {
                let catalog = ProductCatalog(
                    products: products.map { CatalogProduct(productId: $0, kind: .nonConsumable) })
                let settings = AnalyticsSettings(reportingCurrency: products.count == 2 ? "EUR" : "USD")
                try await store.write { tx in
                    try tx.saveCatalog(appId: "cache-app", catalog, at: now)
                    _ = try tx.saveAnalyticsSettings(appId: "cache-app", settings, at: now)
                }
                for _ in 0..<2 {
                    let (read, stored) = try await store.read { reader in
                        (try reader.catalog(appId: "cache-app"), try reader.analyticsSettings(appId: "cache-app"))
                    }
                    #expect(read == catalog)
                    #expect(stored?.settings == settings)
                }
            }
        }
    }
    @Test("churn statements come in a few sizes whatever the number of windows asked for")
    func churnStatementTextsStayFew() async throws {
        try await withStore(.sqlite) { store, _ in
            let counts = try await store.read { reader -> [Int] in
                let connection = (reader as! SQLStoreTransaction).connection as! SQLiteConnection
                var counts: [Int] = []
                for windows in [1, 2, 7, 8, 9, 40, 64, 65, 300, 512, 513, 1_100] {
                    let ends = try reader.analyticsChurnEnds(
                        appId: F.appId, environment: .production,
                        windows: (0..<windows).map {
                            AnalyticsChurnWindow(
                                from: Timestamp(millisecondsSince1970: Int64($0) * 86_400_000),
                                through: Timestamp(millisecondsSince1970: Int64($0 + 1) * 86_400_000))
                        }, filter: AnalyticsFilter())
                    #expect(ends == Array(repeating: AnalyticsChurnEnds(), count: windows))
                    counts.append(connection.preparedStatementCount)
                }
                return counts
            }
            // Three texts (8, 64 and 512 windows) for twelve different lengths.
            #expect(counts.last! - counts.first! == 2)
        }
    }
}
