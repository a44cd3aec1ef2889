import AppStoreModels
import Entitlements
import Foundation
import StorekeeperIngestion
import StorekeeperTesting
import Testing

@testable import Storage

/// A second computation of the analytics figures, straight from the stored facts in plain SQL
/// (`signed_transactions.fact_json`, the latest signed version of each transaction), agreeing
/// exactly with the aggregates `AnalyticsAggregation` keeps, on a seeded random history:
/// monthly subscriptions in USD and EUR started over a year, renewals, full refunds (some in a
/// later month), lapses, family-shared copies revoked now and then, lifetime purchases,
/// purchases of a product in no catalog that have an expiry (never a subscription), and runs of
/// a product in no catalog signed auto-renewable (a subscription without MRR). Paid service
/// stays under a year, so every commission is the standard 30 %.
@Suite struct AnalyticsIndependentComputationTests {
    /// 250 in `make test` (seconds on both engines); `STOREKEEPER_ANALYTICS_CUSTOMERS=10000`
    /// runs issue 13's 10,000-customer history (`make test-analytics-10k`).
    static let customers = Int(ProcessInfo.processInfo.environment["STOREKEEPER_ANALYTICS_CUSTOMERS"] ?? "") ?? 250
    static let appId = IngestionFixture.appId
    static let day: Int64 = 86_400_000

    /// SplitMix64: a small seeded generator, the same sequence on every machine.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1330_11EB
            return z ^ (z >> 31)
        }
    }

    /// The facts of the random history, per app user id.
    static func history(seed: UInt64) -> [(user: String, facts: [TransactionFact])] {
        var random = Seeded(state: seed)
        var result: [(user: String, facts: [TransactionFact])] = []
        for customer in 0..<customers {
            var facts: [TransactionFact] = []
            let currency = Bool.random(using: &random) ? "USD" : "EUR"
            let price: Int64 = currency == "USD" ? 9990 : 8990
            let original = "o\(customer)"
            var start = Int64.random(in: 0..<300, using: &random) * day + Int64.random(in: 0..<day, using: &random)
            let periods = Int.random(in: 1...11, using: &random)
            for period in 0..<periods {
                if period > 0, Int.random(in: 0..<8, using: &random) == 0 {
                    start += Int64.random(in: 1...20, using: &random) * day  // a lapse
                }
                let purchase = IngestionFixture.at(0).adding(milliseconds: start)
                let expires = purchase.adding(milliseconds: 30 * day)
                var fact = TransactionFact(
                    transactionId: "\(original)-t\(period)", originalTransactionId: original, productId: "monthly",
                    subscriptionGroup: "premium", purchaseDate: purchase, expiresDate: expires, signedDate: purchase,
                    environment: .production, price: price, currency: currency,
                    storefront: currency == "USD" ? "USA" : "DEU")
                facts.append(fact)
                if Int.random(in: 0..<10, using: &random) == 0 {
                    // A full refund, up to 40 days later (often in the next month).
                    let refundedAt = purchase.adding(milliseconds: Int64.random(in: 1...40, using: &random) * day)
                    fact.signedDate = refundedAt
                    fact.revocationDate = refundedAt
                    fact.revocationType = .refundFull
                    fact.revocationReason = Int32.random(in: 0...1, using: &random)
                    facts.append(fact)
                }
                start += 30 * day
            }
            if Int.random(in: 0..<4, using: &random) == 0 {
                let purchase = IngestionFixture.at(Int64.random(in: 0..<360, using: &random))
                facts.append(
                    TransactionFact(
                        transactionId: "l\(customer)", originalTransactionId: "l\(customer)", productId: "lifetime",
                        purchaseDate: purchase, signedDate: purchase, environment: .production, price: 49990,
                        currency: currency))
            }
            if Int.random(in: 0..<7, using: &random) == 0 {
                // A product in no catalog, with an expiry but no signed type: a purchase, never
                // a subscription (the engine reads the catalog's kind, then Apple's type).
                let purchase = IngestionFixture.at(Int64.random(in: 0..<360, using: &random))
                facts.append(
                    TransactionFact(
                        transactionId: "p\(customer)", originalTransactionId: "p\(customer)", productId: "promo",
                        purchaseDate: purchase, expiresDate: purchase.adding(milliseconds: 30 * day),
                        signedDate: purchase, environment: .production, price: 1990, currency: currency))
            }
            if Int.random(in: 0..<9, using: &random) == 0 {
                // A product in no catalog signed auto-renewable (a subscription the catalog
                // forgot): counted as a subscription in its own group, with no MRR (no duration
                // known to make its price monthly). A run of one to three months.
                var start = IngestionFixture.at(Int64.random(in: 0..<330, using: &random))
                for period in 0..<Int.random(in: 1...3, using: &random) {
                    facts.append(
                        TransactionFact(
                            transactionId: "s\(customer)-t\(period)", originalTransactionId: "s\(customer)",
                            productId: "legacy", productKind: .autoRenewable, subscriptionGroup: "legacy",
                            purchaseDate: start, expiresDate: start.adding(milliseconds: 30 * day), signedDate: start,
                            environment: .production, price: 4990, currency: currency))
                    start = start.adding(milliseconds: 30 * day)
                }
            }
            if Int.random(in: 0..<6, using: &random) == 0 {
                let purchase = IngestionFixture.at(Int64.random(in: 0..<360, using: &random))
                var shared = TransactionFact(
                    transactionId: "f\(customer)", originalTransactionId: "f\(customer)", productId: "monthly",
                    subscriptionGroup: "premium", purchaseDate: purchase,
                    expiresDate: purchase.adding(milliseconds: 30 * day), signedDate: purchase,
                    ownership: .familyShared,
                    environment: .production, price: price, currency: currency)
                facts.append(shared)
                if Bool.random(using: &random) {
                    shared.signedDate = purchase.adding(milliseconds: 5 * day)
                    shared.revocationDate = shared.signedDate
                    shared.revocationType = .familyRevoke
                    facts.append(shared)
                }
            }
            result.append(("user-\(customer)", facts))
        }
        return result
    }

    @Test(arguments: Backend.enabled)
    func aggregatesAgreeWithPlainSQL(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await IngestionFixture.setUp(store)
            let history = Self.history(seed: 13)
            try await store.write { tx in
                for (user, facts) in history {
                    let customer = try tx.ensureCustomer(appId: Self.appId, appUserId: user, at: IngestionFixture.now)
                    for original in Set(facts.map(\.originalTransactionId)).sorted() {
                        try tx.claimOriginalTransaction(original, customerId: customer.id, at: IngestionFixture.now)
                    }
                    for fact in facts {
                        _ = try tx.insertTransaction(
                            NewTransaction(
                                appId: Self.appId,
                                jws: "jws.\(fact.transactionId).\(fact.signedDate.millisecondsSince1970)",
                                fact: fact, source: "test", receivedAt: IngestionFixture.now))
                    }
                }
            }
            let rebuilt = try await AnalyticsAggregation.rebuild(
                appId: Self.appId, store: store, now: IngestionFixture.now)
            #expect(rebuilt.changed)
            #expect(rebuilt.customers == Self.customers)
            let again = try await AnalyticsAggregation.rebuild(
                appId: Self.appId, store: store, now: IngestionFixture.now)
            #expect(again.changed == false)

            let first = CalendarDay(containing: IngestionFixture.at(0))
            let last = CalendarDay(containing: IngestionFixture.at(1100))
            let (daily, sql) = try await store.read { reader in
                (
                    try reader.analyticsDailyTotals(
                        appId: Self.appId, environment: .production, from: first, through: last,
                        filter: AnalyticsFilter()),
                    try IndependentSQL(reader: reader, postgres: backend == .postgres)
                )
            }
            // Money per purchase day and currency.
            var revenue: [String: [Int64]] = [:]
            var refundsOnDate: [String: [Int64]] = [:]
            var newCustomers: [Int64: Int64] = [:]
            var familyRevocations: [Int64: Int64] = [:]
            for total in daily {
                let key = "\(total.day.daysSince1970)/\(total.currency)"
                let m = total.measures
                if m.transactions != 0 || m.gross != 0 {
                    revenue[key] = [m.transactions, m.gross, m.proceeds, m.refunded, m.refundedProceeds]
                }
                if m.refunds != 0 { refundsOnDate[key] = [m.refunds, m.refundsDeveloperIssue, m.refundedOnDate] }
                if m.newCustomers != 0 { newCustomers[total.day.daysSince1970, default: 0] += m.newCustomers }
                if m.familyRevocations != 0 {
                    familyRevocations[total.day.daysSince1970, default: 0] += m.familyRevocations
                }
            }
            #expect(revenue.count > 300)
            #expect(revenue == sql.revenue)
            #expect(refundsOnDate == sql.refundsOnDate)
            #expect(newCustomers == sql.newCustomers)
            #expect(familyRevocations == sql.familyRevocations)

            // Counts and MRR at midnights: running sums of the deltas against a count of the
            // periods covering each midnight.
            var running: [String: AnalyticsMeasures] = [:]
            var index = 0
            for dayNumber in first.daysSince1970...last.daysSince1970 {
                while index < daily.count, daily[index].day.daysSince1970 <= dayNumber {
                    running[daily[index].currency] =
                        (running[daily[index].currency] ?? AnalyticsMeasures()) + daily[index].measures
                    index += 1
                }
                guard dayNumber % 14 == 0 else { continue }
                let midnight = dayNumber * Self.day
                let expected = try await store.read { reader in
                    try IndependentSQL.active(reader: reader, postgres: backend == .postgres, at: midnight)
                }
                let paid = running.values.reduce(0) { $0 + $1.activePaidDelta }
                let family = running.values.reduce(0) { $0 + $1.activeFamilyDelta }
                let mrr = running.filter { $0.value.mrrGrossDelta != 0 }.mapValues(\.mrrGrossDelta)
                #expect(paid == expected.paid, "paid actives at day \(dayNumber)")
                #expect(family == expected.family, "family actives at day \(dayNumber)")
                #expect(mrr == expected.mrr, "MRR at day \(dayNumber)")
            }

            // Churn per month: paid subscriptions at the month's first midnight (running sum of
            // the runs' deltas) and those whose run ended in it without a new one by its end
            // (the stored run ends), against plain SQL over the periods covering both midnights.
            // (Every run here lasts at least 30 days, so a run active at a month's start that
            // ended and came back within it is still paying at its end.)
            // All eleven months are asked in one read, as a monthly series does.
            let months = (1...11).map { month in
                (
                    start: CalendarDay(year: 2026, month: month, day: 1),
                    end: CalendarDay(year: 2026, month: month + 1, day: 1)
                )
            }
            let churnEnds = try await store.read { reader in
                try reader.analyticsChurnEnds(
                    appId: Self.appId, environment: .production,
                    windows: months.map { AnalyticsChurnWindow(from: $0.start.start, through: $0.end.start) },
                    filter: AnalyticsFilter())
            }
            #expect(churnEnds.count == 11)
            var churnChecked = 0
            for (index, (start, end)) in months.enumerated() {
                let before = try await store.read { reader in
                    try reader.analyticsTotalsBefore(
                        appId: Self.appId, environment: .production, day: start.adding(days: 1),
                        filter: AnalyticsFilter())
                }
                let activeAtStart = before.reduce(0) { $0 + $1.measures.paidRunsActiveDelta }
                let expected = try await store.read { reader in
                    try IndependentSQL.churn(
                        reader: reader, postgres: backend == .postgres, from: start.start.millisecondsSince1970,
                        to: end.start.millisecondsSince1970)
                }
                #expect(activeAtStart == expected.activeAtStart, "active at \(start)")
                #expect(churnEnds[index].churned == expected.churned, "churned in \(start)")
                #expect(
                    churnEnds[index].byReason == (expected.churned == 0 ? [:] : [nil: expected.churned]),
                    "no renewal info: reason unknown")
                churnChecked += Int(expected.churned)
            }
            #expect(churnChecked > 20)

            // MRR movement per day, per currency, against plain SQL comparing each subscription's
            // coverage at the midnights before and after the day.
            var moved = 0
            for dayNumber in stride(from: first.daysSince1970 + 20, to: first.daysSince1970 + 140, by: 1) {
                let day = CalendarDay(daysSince1970: dayNumber)
                let rows = try await store.read { reader in
                    try reader.analyticsDailyTotals(
                        appId: Self.appId, environment: .production, from: day, through: day, filter: AnalyticsFilter())
                }
                var kept: [String: [Int64]] = [:]
                for total in rows {
                    let m = total.measures
                    let figures = [m.mrrNew, m.mrrExpansion, m.mrrContraction, m.mrrChurned, m.mrrReactivation]
                    if figures.contains(where: { $0 != 0 }) { kept[total.currency] = figures }
                }
                let expected = try await store.read { reader in
                    try IndependentSQL.movement(
                        reader: reader, postgres: backend == .postgres, midnight: dayNumber * Self.day)
                }
                #expect(kept == expected, "MRR movement on \(day)")
                moved += kept.count
            }
            #expect(moved > 50)

            try await Self.expectCohortsAgree(store: store, postgres: backend == .postgres)
        }
    }
}

/// The independent computation: SQL over the stored facts only (no aggregate table, no Swift
/// rule but a SUM, a COUNT and integer rounding).
struct IndependentSQL {
    var revenue: [String: [Int64]] = [:]
    var refundsOnDate: [String: [Int64]] = [:]
    var newCustomers: [Int64: Int64] = [:]
    var familyRevocations: [Int64: Int64] = [:]

    static func field(_ name: String, postgres: Bool) -> String {
        postgres ? "(f::jsonb ->> '\(name)')" : "json_extract(f, '$.\(name)')"
    }

    /// Whether the fact is of an auto-renewable subscription, restated from the rule: the
    /// catalog's kind when the catalog sells the product, else Apple's signed type (not "has
    /// an expiry": the history's `promo` has one).
    static func subscription(postgres: Bool) -> String {
        let products = IngestionFixture.catalog.products.values.sorted { $0.productId < $1.productId }
        let list = { (ids: [String]) in ids.map { "'\($0)'" }.joined(separator: ", ") }
        let product = field("productId", postgres: postgres)
        return """
            (\(product) IN (\(list(products.filter { $0.kind == .autoRenewable }.map(\.productId))))
             OR (\(product) NOT IN (\(list(products.map(\.productId))))
                 AND \(field("productKind", postgres: postgres)) = '\(ProductKind.autoRenewable.rawValue)'))
            """
    }

    static func number(_ name: String, postgres: Bool) -> String {
        postgres ? "(f::jsonb ->> '\(name)')::bigint" : "json_extract(f, '$.\(name)')"
    }

    /// A subscription's price as MRR: the price for the catalog's subscriptions (every one here
    /// is monthly), 0 for a product in no catalog (no duration to make its price monthly).
    static func monthlyPrice(postgres: Bool) -> String {
        let catalog = IngestionFixture.catalog.products.values.filter { $0.kind == .autoRenewable }
            .map { "'\($0.productId)'" }.sorted().joined(separator: ", ")
        return """
            (CASE WHEN \(field("productId", postgres: postgres)) IN (\(catalog)) \
            THEN \(number("price", postgres: postgres)) ELSE 0 END)
            """
    }

    /// The latest signed version of each Production transaction of the app, with its customer.
    /// Materialized, and on PostgreSQL parsed to `jsonb` there once: inlined, every field read
    /// parsed the text again (over a minute per query for 10,000 customers).
    static func latest(postgres: Bool) -> String {
        """
        WITH latest AS MATERIALIZED (
            SELECT \(postgres ? "s.fact_json::jsonb" : "s.fact_json") AS f, c.customer_id AS customer
            FROM signed_transactions s
            JOIN customer_transactions c
                ON c.app_id = s.app_id AND c.original_transaction_id = s.original_transaction_id
            WHERE s.app_id = 'app-1' AND s.environment = 'Production'
              AND s.signed_date = (SELECT MAX(t.signed_date) FROM signed_transactions t
                                   WHERE t.app_id = s.app_id AND t.environment = s.environment
                                     AND t.transaction_id = s.transaction_id)
        )
        """
    }

    init(reader: any StoreReader, postgres: Bool) throws {
        let price = Self.number("price", postgres: postgres)
        let purchaseDay = "(\(Self.number("purchaseDate", postgres: postgres)) / 86400000)"
        let revokedDay = "(\(Self.number("revocationDate", postgres: postgres)) / 86400000)"
        let currency = Self.field("currency", postgres: postgres)
        let ownership = Self.field("ownership", postgres: postgres)
        let revocationType = Self.field("revocationType", postgres: postgres)
        let reason = Self.number("revocationReason", postgres: postgres)
        let paid = "\(ownership) = 'PURCHASED' AND \(price) > 0"
        let refunded = "\(revocationType) = 'REFUND_FULL'"
        for row in try reader.sql(
            """
            \(Self.latest(postgres: postgres))
            SELECT \(purchaseDay), \(currency), COUNT(*), SUM(\(price)), SUM((\(price) * 7000 + 5000) / 10000),
                   SUM(CASE WHEN \(refunded) THEN \(price) ELSE 0 END),
                   SUM(CASE WHEN \(refunded) THEN (\(price) * 7000 + 5000) / 10000 ELSE 0 END)
            FROM latest WHERE \(paid) GROUP BY 1, 2
            """)
        {
            revenue["\(try row.integer(0))/\(try row.text(1))"] = try (2...6).map { try row.integer($0) }
        }
        for row in try reader.sql(
            """
            \(Self.latest(postgres: postgres))
            SELECT \(revokedDay), \(currency), COUNT(*), SUM(CASE WHEN \(reason) = 1 THEN 1 ELSE 0 END), SUM(\(price))
            FROM latest WHERE \(paid) AND \(refunded) GROUP BY 1, 2
            """)
        {
            refundsOnDate["\(try row.integer(0))/\(try row.text(1))"] = try (2...4).map { try row.integer($0) }
        }
        for row in try reader.sql(
            """
            \(Self.latest(postgres: postgres))
            SELECT first_day, COUNT(*) FROM (
                SELECT customer, MIN(\(purchaseDay)) AS first_day FROM latest
                WHERE \(ownership) = 'PURCHASED' GROUP BY customer
            ) firsts GROUP BY first_day
            """)
        {
            newCustomers[try row.integer(0)] = try row.integer(1)
        }
        for row in try reader.sql(
            """
            \(Self.latest(postgres: postgres))
            SELECT \(revokedDay), COUNT(*) FROM latest
            WHERE \(ownership) = 'FAMILY_SHARED' AND \(Self.field("revocationDate", postgres: postgres)) IS NOT NULL
            GROUP BY 1
            """)
        {
            familyRevocations[try row.integer(0)] = try row.integer(1)
        }
    }

    /// Paid and family-shared subscription periods covering `midnight`, and the paid ones' MRR
    /// per currency (`monthlyPrice`; currencies with none left out).
    static func active(reader: any StoreReader, postgres: Bool, at midnight: Int64) throws
        -> (paid: Int64, family: Int64, mrr: [String: Int64])
    {
        let price = monthlyPrice(postgres: postgres)
        let purchase = number("purchaseDate", postgres: postgres)
        let expires = number("expiresDate", postgres: postgres)
        let revoked = number("revocationDate", postgres: postgres)
        let ownership = field("ownership", postgres: postgres)
        let revocationType = field("revocationType", postgres: postgres)
        let covering = """
            \(subscription(postgres: postgres)) AND \(purchase) <= \(midnight)
            AND \(midnight) < \(expires)
            AND (\(field("revocationDate", postgres: postgres)) IS NULL
                 OR (\(revocationType) = 'FAMILY_REVOKE' AND \(midnight) < \(revoked)))
            """
        var paid: Int64 = 0
        var family: Int64 = 0
        var mrr: [String: Int64] = [:]
        for row in try reader.sql(
            """
            \(latest(postgres: postgres))
            SELECT \(ownership), \(field("currency", postgres: postgres)), COUNT(*), SUM(\(price))
            FROM latest WHERE \(covering) GROUP BY 1, 2
            """)
        {
            if try row.text(0) == "FAMILY_SHARED" {
                family += try row.integer(2)
            } else {
                paid += try row.integer(2)
                if try row.integer(3) != 0 { mrr[try row.text(1)] = try row.integer(3) }
            }
        }
        return (paid, family, mrr)
    }

    /// The paid, unrefunded subscription periods per subscription (customer and group; every
    /// product here is monthly) with whether each covers the given midnights, and its MRR.
    static func coverage(postgres: Bool, midnights: [Int64]) -> String {
        let purchase = number("purchaseDate", postgres: postgres)
        let expires = number("expiresDate", postgres: postgres)
        let covers = midnights.enumerated().map { index, midnight in
            "MAX(CASE WHEN \(purchase) <= \(midnight) AND \(midnight) < \(expires) THEN 1 ELSE 0 END) AS c\(index)"
        }
        return """
            SELECT customer, \(field("currency", postgres: postgres)) AS currency, MAX(\(monthlyPrice(postgres: postgres))) AS price,
                   \(covers.joined(separator: ", ")),
                   MAX(CASE WHEN ((\(purchase) + 86399999) / 86400000) * 86400000 <= \(midnights[0]) THEN 1 ELSE 0 END)
                       AS paid_before
            FROM latest
            WHERE \(field("ownership", postgres: postgres)) = 'PURCHASED' AND \(subscription(postgres: postgres))
              AND \(field("revocationDate", postgres: postgres)) IS NULL
            GROUP BY customer, \(field("subscriptionGroup", postgres: postgres)), \(field("currency", postgres: postgres))
            """
    }

    /// Paid subscriptions at midnight `from`, and those of them not paying at midnight `to`.
    static func churn(reader: any StoreReader, postgres: Bool, from: Int64, to: Int64) throws
        -> (activeAtStart: Int64, churned: Int64)
    {
        let row = try reader.sql(
            """
            \(latest(postgres: postgres))
            SELECT SUM(c0), SUM(CASE WHEN c0 = 1 AND c1 = 0 THEN 1 ELSE 0 END)
            FROM (\(coverage(postgres: postgres, midnights: [from, to]))) subscriptions
            """
        ).first
        return (try row?.optionalInteger(0) ?? 0, try row?.optionalInteger(1) ?? 0)
    }

    /// The MRR movement of the day starting at `midnight`, per currency: new, expansion,
    /// contraction, churned, reactivation (only currencies that moved).
    static func movement(reader: any StoreReader, postgres: Bool, midnight: Int64) throws -> [String: [Int64]] {
        var result: [String: [Int64]] = [:]
        for row in try reader.sql(
            """
            \(latest(postgres: postgres))
            SELECT currency,
                   SUM(CASE WHEN c0 = 0 AND c1 = 1 AND paid_before = 0 THEN price ELSE 0 END),
                   SUM(CASE WHEN c0 = 1 AND c1 = 0 THEN price ELSE 0 END),
                   SUM(CASE WHEN c0 = 0 AND c1 = 1 AND paid_before = 1 THEN price ELSE 0 END)
            FROM (\(coverage(postgres: postgres, midnights: [midnight, midnight + 86_400_000]))) subscriptions
            GROUP BY currency
            """)
        {
            let figures = [try row.integer(1), 0, 0, try row.integer(2), try row.integer(3)]
            if figures.contains(where: { $0 != 0 }) { result[try row.text(0)] = figures }
        }
        return result
    }
}
