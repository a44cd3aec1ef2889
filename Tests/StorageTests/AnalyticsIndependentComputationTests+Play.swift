import AppStoreModels
import Entitlements
import Foundation
import StorekeeperIngestion
import StorekeeperTesting
import Testing

@testable import Storage

/// Issue 15: the independent computation of a world with Google Play customers: the App Store
/// history of `AnalyticsIndependentComputationTests` plus monthly Play subscriptions (USD or
/// EUR, renewing every 30 days through successive order ids, some orders voided in full, one
/// of them later by a revocation naming no order too), and lifetime purchases on Play; a
/// hundred App Store customers also buy on Play. Plain SQL over `play_snapshots` and
/// `signed_transactions` agrees exactly with the aggregates: Play's revenue and proceeds at 15 %,
/// its refunds, its active subscriptions and MRR (`store=googlePlay`), the App Store's figures
/// alone (`store=appStore`), and new customers counted once across both stores.
extension AnalyticsIndependentComputationTests {
    static let playPackage = "com.example.play"
    static let playCustomers = 200

    /// The Play facts of the world, per app user id (the first hundred are App Store customers too).
    static func playHistory(seed: UInt64) -> [(user: String, facts: [Fact])] {
        var random = Seeded(state: seed)
        var result: [(user: String, facts: [Fact])] = []
        for customer in 0..<playCustomers {
            let user = customer < 100 ? "user-\(customer)" : "play-\(customer)"
            let token = "play-token-\(customer)"
            let currency = Bool.random(using: &random) ? "USD" : "EUR"
            let price: Int64 = currency == "USD" ? 9990 : 8990
            let start = IngestionFixture.at(0).adding(
                milliseconds: Int64.random(in: 0..<300, using: &random) * day
                    + Int64.random(in: 0..<day, using: &random))
            let orders = Int.random(in: 1...10, using: &random)
            var facts: [Fact] = []
            var orderIds: [String] = []
            for order in 0..<orders {
                let orderStart = start.adding(milliseconds: Int64(order) * 30 * day)
                let orderId = order == 0 ? "GPA.\(customer)" : "GPA.\(customer)..\(order - 1)"
                orderIds.append(orderId)
                facts.append(
                    .playSubscription(
                        PlaySubscriptionFact(
                            packageName: playPackage, purchaseToken: token, readAt: orderStart, state: RawEnum(.active),
                            startTime: start,
                            lineItems: [
                                PlaySubscriptionLineItem(
                                    productId: "monthly", expiryTime: orderStart.adding(milliseconds: 30 * day),
                                    autoRenewEnabled: true, latestSuccessfulOrderId: orderId,
                                    recurringPrice: Money(milliunits: price, currency: currency))
                            ], isAcknowledged: true, regionCode: currency == "USD" ? "US" : "DE")))
            }
            if Int.random(in: 0..<6, using: &random) == 0 {
                // A full refund of one order, up to 40 days after it began.
                let order = Int.random(in: 0..<orders, using: &random)
                let voidedAt = start.adding(
                    milliseconds: Int64(order) * 30 * day + Int64.random(in: 1...40, using: &random) * day)
                facts.append(
                    .playVoidedPurchase(
                        PlayVoidedPurchaseFact(
                            packageName: playPackage, purchaseToken: token, orderId: orderIds[order],
                            productType: .subscription, voidedAt: voidedAt, voidedSource: 0,
                            voidedReason: Int.random(in: 0...3, using: &random), refundType: .full)))
                if order == orders - 1, Bool.random(using: &random) {
                    // The revocation of the latest order, told an hour earlier: still one refund.
                    facts.append(
                        .playVoidedPurchase(
                            PlayVoidedPurchaseFact(
                                packageName: playPackage, purchaseToken: token, orderId: nil,
                                productType: .subscription, voidedAt: voidedAt.adding(milliseconds: -3_600_000),
                                voidedSource: nil, voidedReason: nil, refundType: .full)))
                }
            }
            if Int.random(in: 0..<4, using: &random) == 0 {
                let purchase = IngestionFixture.at(Int64.random(in: 0..<360, using: &random))
                facts.append(
                    .playProductPurchase(
                        PlayProductPurchaseFact(
                            packageName: playPackage, purchaseToken: "play-product-\(customer)", productId: "lifetime",
                            orderId: "GPA.p\(customer)", readAt: purchase, purchaseTime: purchase,
                            purchaseState: RawEnum(.purchased), isAcknowledged: true,
                            price: Money(milliunits: 49990, currency: currency))))
            }
            result.append((user, facts))
        }
        return result
    }

    static func purchaseToken(of fact: Fact) -> String {
        switch fact {
        case .playSubscription(let value): return value.purchaseToken
        case .playProductPurchase(let value): return value.purchaseToken
        case .playVoidedPurchase(let value): return value.purchaseToken
        default: return ""
        }
    }

    @Test(arguments: Backend.enabled)
    func playAggregatesAgreeWithPlainSQL(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await IngestionFixture.setUp(store)
            let apple = Self.history(seed: 13)
            let play = Self.playHistory(seed: 15)
            try await store.write { tx in
                for (user, facts) in apple {
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
                for (user, facts) in play {
                    let customer = try tx.ensureCustomer(appId: Self.appId, appUserId: user, at: IngestionFixture.now)
                    for token in Set(facts.map(Self.purchaseToken)).sorted() {
                        try tx.claimOriginalTransaction(token, customerId: customer.id, at: IngestionFixture.now)
                    }
                    for (index, fact) in facts.enumerated() {
                        _ = try tx.insertPlayFact(
                            NewPlayFact(
                                appId: Self.appId, raw: "{\"n\":\(index)}", fact: fact, source: "test",
                                receivedAt: IngestionFixture.now))
                    }
                }
            }
            let rebuilt = try await AnalyticsAggregation.rebuild(
                appId: Self.appId, store: store, now: IngestionFixture.now)
            #expect(rebuilt.changed)
            #expect(rebuilt.customers == Self.customers + 100)
            let again = try await AnalyticsAggregation.rebuild(
                appId: Self.appId, store: store, now: IngestionFixture.now)
            #expect(again.changed == false)

            let first = CalendarDay(containing: IngestionFixture.at(0))
            let last = CalendarDay(containing: IngestionFixture.at(700))
            let postgres = backend == .postgres
            let (playDaily, appleDaily, allDaily, sql, appleSQL) = try await store.read { reader in
                (
                    try reader.analyticsDailyTotals(
                        appId: Self.appId, environment: .production, from: first, through: last,
                        filter: AnalyticsFilter(store: .googlePlay)),
                    try reader.analyticsDailyTotals(
                        appId: Self.appId, environment: .production, from: first, through: last,
                        filter: AnalyticsFilter(store: .appStore)),
                    try reader.analyticsDailyTotals(
                        appId: Self.appId, environment: .production, from: first, through: last,
                        filter: AnalyticsFilter()),
                    try IndependentPlaySQL(reader: reader, postgres: postgres),
                    try IndependentSQL(reader: reader, postgres: postgres)
                )
            }
            func revenue(_ daily: [AnalyticsDailyTotal]) -> [String: [Int64]] {
                var result: [String: [Int64]] = [:]
                for total in daily {
                    let m = total.measures
                    if m.transactions != 0 || m.gross != 0 {
                        result["\(total.day.daysSince1970)/\(total.currency)"] = [
                            m.transactions, m.gross, m.proceeds, m.refunded, m.refundedProceeds,
                        ]
                    }
                }
                return result
            }
            var refundsOnDate: [String: [Int64]] = [:]
            for total in playDaily where total.measures.refunds != 0 {
                let m = total.measures
                refundsOnDate["\(total.day.daysSince1970)/\(total.currency)"] = [
                    m.refunds, m.refundsDeveloperIssue, m.refundedOnDate,
                ]
            }
            var newCustomers: [Int64: Int64] = [:]
            for total in allDaily where total.measures.newCustomers != 0 {
                newCustomers[total.day.daysSince1970, default: 0] += total.measures.newCustomers
            }
            #expect(revenue(playDaily).count > 300)
            #expect(revenue(playDaily) == sql.revenue)
            #expect(refundsOnDate == sql.refundsOnDate)
            #expect(sql.refundsOnDate.count > 10)
            #expect(revenue(appleDaily) == appleSQL.revenue)
            #expect(newCustomers == sql.newCustomers)
            #expect(newCustomers.values.reduce(0, +) == Int64(Self.customers + 100))

            // Play's active subscriptions and MRR at midnights: running sums of its deltas
            // against the orders covering each midnight.
            var running: [String: AnalyticsMeasures] = [:]
            var index = 0
            var checked = 0
            for dayNumber in first.daysSince1970...last.daysSince1970 {
                while index < playDaily.count, playDaily[index].day.daysSince1970 <= dayNumber {
                    running[playDaily[index].currency] =
                        (running[playDaily[index].currency] ?? AnalyticsMeasures()) + playDaily[index].measures
                    index += 1
                }
                guard dayNumber % 10 == 0 else { continue }
                let expected = try await store.read { reader in
                    try IndependentPlaySQL.active(reader: reader, postgres: postgres, at: dayNumber * Self.day)
                }
                let paid = running.values.reduce(0) { $0 + $1.activePaidDelta }
                let mrr = running.filter { $0.value.mrrGrossDelta != 0 }.mapValues(\.mrrGrossDelta)
                let mrrProceeds = running.filter { $0.value.mrrProceedsDelta != 0 }.mapValues(\.mrrProceedsDelta)
                #expect(paid == expected.paid, "Play paid actives at day \(dayNumber)")
                #expect(mrr == expected.mrr, "Play MRR at day \(dayNumber)")
                #expect(mrrProceeds == expected.mrrProceeds, "Play MRR proceeds at day \(dayNumber)")
                checked += Int(expected.paid)
            }
            #expect(checked > 500)
            // Retention and LTV: both stores' customers in one cohort.
            try await Self.expectCohortsAgree(store: store, postgres: postgres, play: true)
        }
    }
}

/// The independent computation of the Play figures: SQL over the stored Play facts
/// (`play_snapshots.fact_json`), no aggregate table and no Swift rule but sums, counts and
/// integer rounding. A subscription order is the snapshots naming its
/// `latestSuccessfulOrderId`: charged at its first read, active until its expiry; an order with
/// a voided record is refunded in full at the earliest one and active at no instant.
struct IndependentPlaySQL {
    var revenue: [String: [Int64]] = [:]
    var refundsOnDate: [String: [Int64]] = [:]
    var newCustomers: [Int64: Int64] = [:]

    static func path(_ path: [String], number: Bool = false, postgres: Bool) -> String {
        if postgres {
            let steps = path.dropLast().map { Int($0) != nil ? " -> \($0)" : " -> '\($0)'" }.joined()
            let text = "(s.fact_json::jsonb\(steps) ->> '\(path.last!)')"
            return number ? "\(text)::bigint" : text
        }
        let steps = path.map { Int($0) != nil ? "[\($0)]" : ".\($0)" }.joined()
        return "json_extract(s.fact_json, '$\(steps)')"
    }

    /// Orders of the app's Production Play subscriptions, each with its customer, start, end,
    /// price and currency, and its refund (voided time and reason; NULL when none).
    static func orders(postgres: Bool) -> String {
        let order = path(["lineItems", "0", "latestSuccessfulOrderId"], postgres: postgres)
        let expiry = path(["lineItems", "0", "expiryTime"], number: true, postgres: postgres)
        let price = path(["lineItems", "0", "recurringPrice", "milliunits"], number: true, postgres: postgres)
        let currency = path(["lineItems", "0", "recurringPrice", "currency"], postgres: postgres)
        let voidedOrder = path(["orderId"], postgres: postgres)
        let voidedAt = path(["voidedAt"], number: true, postgres: postgres)
        let reason = path(["voidedReason"], number: true, postgres: postgres)
        return """
            WITH charged AS (
                SELECT c.customer_id AS customer, s.purchase_token AS token, \(order) AS order_id,
                       MIN(s.read_at) AS start_at, MAX(\(expiry)) AS end_at, MAX(\(price)) AS price,
                       MAX(\(currency)) AS currency
                FROM play_snapshots s
                JOIN customer_transactions c ON c.app_id = s.app_id AND c.original_transaction_id = s.purchase_token
                WHERE s.app_id = 'app-1' AND s.environment = 'Production' AND s.kind = 'subscription'
                GROUP BY c.customer_id, s.purchase_token, \(order)
            ),
            voids AS (
                SELECT s.purchase_token AS token, \(voidedOrder) AS order_id, \(voidedAt) AS voided_at,
                       \(reason) AS reason
                FROM play_snapshots s
                WHERE s.app_id = 'app-1' AND s.environment = 'Production' AND s.kind = 'voided'
            ),
            orders AS (
                SELECT charged.*,
                       (SELECT MIN(v.voided_at) FROM voids v WHERE v.token = charged.token
                          AND (v.order_id = charged.order_id OR (v.order_id IS NULL AND charged.start_at =
                               (SELECT MAX(o.start_at) FROM charged o WHERE o.token = charged.token)))) AS voided_at,
                       (SELECT MAX(v.reason) FROM voids v WHERE v.token = charged.token
                          AND v.order_id = charged.order_id) AS reason
                FROM charged
            )
            """
    }

    init(reader: any StoreReader, postgres: Bool) throws {
        let orders = Self.orders(postgres: postgres)
        let proceeds = "((price * 8500 + 5000) / 10000)"
        let productPrice = Self.path(["price", "milliunits"], number: true, postgres: postgres)
        let productCurrency = Self.path(["price", "currency"], postgres: postgres)
        let productTime = Self.path(["purchaseTime"], number: true, postgres: postgres)
        for row in try reader.sql(
            """
            \(orders)
            SELECT day, currency, COUNT(*), SUM(price), SUM(\(proceeds)),
                   SUM(CASE WHEN refunded THEN price ELSE 0 END), SUM(CASE WHEN refunded THEN \(proceeds) ELSE 0 END)
            FROM (
                SELECT start_at / 86400000 AS day, currency, price, voided_at IS NOT NULL AS refunded FROM orders
                UNION ALL
                SELECT \(productTime) / 86400000, \(productCurrency), \(productPrice), 1 = 0
                FROM play_snapshots s WHERE s.app_id = 'app-1' AND s.environment = 'Production' AND s.kind = 'product'
            ) charges
            GROUP BY day, currency
            """)
        {
            revenue["\(try row.integer(0))/\(try row.text(1))"] = try (2...6).map { try row.integer($0) }
        }
        for row in try reader.sql(
            """
            \(orders)
            SELECT voided_at / 86400000, currency, COUNT(*), SUM(CASE WHEN reason IN (2, 3) THEN 1 ELSE 0 END),
                   SUM(price)
            FROM orders WHERE voided_at IS NOT NULL GROUP BY 1, 2
            """)
        {
            refundsOnDate["\(try row.integer(0))/\(try row.text(1))"] = try (2...4).map { try row.integer($0) }
        }
        // New customers, both stores: each customer's first purchase day in either.
        let apple = IndependentSQL.latest(postgres: postgres).replacingOccurrences(
            of: "WITH latest AS", with: "latest AS")
        let ownership = IndependentSQL.field("ownership", postgres: postgres)
        let purchaseDay = "(\(IndependentSQL.number("purchaseDate", postgres: postgres)) / 86400000)"
        for row in try reader.sql(
            """
            WITH \(apple.trimmingCharacters(in: .whitespacesAndNewlines)),
            firsts AS (
                SELECT customer, MIN(day) AS first_day FROM (
                    SELECT customer, \(purchaseDay) AS day FROM latest WHERE \(ownership) = 'PURCHASED'
                    UNION ALL
                    SELECT c.customer_id, s.read_at / 86400000
                    FROM play_snapshots s
                    JOIN customer_transactions c
                        ON c.app_id = s.app_id AND c.original_transaction_id = s.purchase_token
                    WHERE s.app_id = 'app-1' AND s.environment = 'Production' AND s.kind IN ('subscription', 'product')
                ) purchases GROUP BY customer
            )
            SELECT first_day, COUNT(*) FROM firsts GROUP BY first_day
            """)
        {
            newCustomers[try row.integer(0)] = try row.integer(1)
        }
    }

    /// Play subscriptions (one token each, no replacements, no offers: every order is full
    /// price) by the month of their first order not refunded and the number of such orders
    /// after it, keyed `YYYY-MM/renewals`.
    static func retention(reader: any StoreReader, postgres: Bool) throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        for row in try reader.sql(
            """
            \(orders(postgres: postgres))
            SELECT \(IndependentSQL.month("first_payment", postgres: postgres)), renewals, COUNT(*) FROM (
                SELECT token, MIN(start_at) AS first_payment, COUNT(*) - 1 AS renewals
                FROM orders WHERE voided_at IS NULL GROUP BY token
            ) subscriptions GROUP BY 1, 2
            """)
        {
            result["\(try row.text(0))/\(try row.integer(1))"] = try row.integer(2)
        }
        return result
    }

    /// Every purchase of both stores with its customer, instant, price, net (0 when refunded
    /// in full) and currency, and each customer's first purchase, as CTEs: the App Store's
    /// purchased transactions, Play's subscription orders and one-time purchases.
    static func purchases(postgres: Bool) -> String {
        let apple = IndependentSQL.latest(postgres: postgres).replacingOccurrences(
            of: "WITH latest AS", with: "latest AS")
        let play = orders(postgres: postgres).replacingOccurrences(of: "WITH charged AS", with: "charged AS")
        let price = IndependentSQL.number("price", postgres: postgres)
        let refunded = "\(IndependentSQL.field("revocationType", postgres: postgres)) = 'REFUND_FULL'"
        return """
            WITH \(apple.trimmingCharacters(in: .whitespacesAndNewlines)),
            \(play.trimmingCharacters(in: .whitespacesAndNewlines)),
            purchases AS (
                SELECT customer, \(IndependentSQL.number("purchaseDate", postgres: postgres)) AS at, \(price) AS price,
                       CASE WHEN \(refunded) THEN 0 ELSE \(price) END AS net,
                       \(IndependentSQL.field("currency", postgres: postgres)) AS currency
                FROM latest WHERE \(IndependentSQL.field("ownership", postgres: postgres)) = 'PURCHASED'
                UNION ALL
                SELECT customer, start_at, price, CASE WHEN voided_at IS NULL THEN price ELSE 0 END, currency
                FROM orders
                UNION ALL
                SELECT c.customer_id, \(path(["purchaseTime"], number: true, postgres: postgres)),
                       \(path(["price", "milliunits"], number: true, postgres: postgres)),
                       \(path(["price", "milliunits"], number: true, postgres: postgres)),
                       \(path(["price", "currency"], postgres: postgres))
                FROM play_snapshots s
                JOIN customer_transactions c ON c.app_id = s.app_id AND c.original_transaction_id = s.purchase_token
                WHERE s.app_id = 'app-1' AND s.environment = 'Production' AND s.kind = 'product'
            ),
            firsts AS (SELECT customer AS first_customer, MIN(at) AS first_purchase FROM purchases GROUP BY customer)
            """
    }

    /// Both stores' net revenue of paid purchases within 7, 30, 90 and 365 days of the
    /// customer's first purchase in either, keyed `YYYY-MM/currency` by that first purchase's month.
    static func ltvBothStores(reader: any StoreReader, postgres: Bool) throws -> [String: [Int64]] {
        let horizons = [7, 30, 90, 365].map { days in
            "SUM(CASE WHEN at - first_purchase < \(Int64(days) * 86_400_000) THEN net ELSE 0 END)"
        }
        var result: [String: [Int64]] = [:]
        for row in try reader.sql(
            """
            \(purchases(postgres: postgres))
            SELECT \(IndependentSQL.month("first_purchase", postgres: postgres)), currency,
                   \(horizons.joined(separator: ", "))
            FROM purchases JOIN firsts ON first_customer = customer
            WHERE price > 0
            GROUP BY 1, 2
            """)
        {
            let sums = try (2...5).map { try row.integer($0) }
            if sums.contains(where: { $0 != 0 }) { result["\(try row.text(0))/\(try row.text(1))"] = sums }
        }
        return result
    }

    /// Customers of either store by the month of their first purchase in either.
    static func cohortCustomersBothStores(reader: any StoreReader, postgres: Bool) throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        for row in try reader.sql(
            """
            \(purchases(postgres: postgres))
            SELECT \(IndependentSQL.month("first_purchase", postgres: postgres)), COUNT(*) FROM firsts GROUP BY 1
            """)
        {
            result[try row.text(0)] = try row.integer(1)
        }
        return result
    }

    /// Play orders paid for at `midnight` (not refunded), and their MRR per currency, gross and
    /// at 15 % (every product here is monthly: MRR is the price).
    static func active(reader: any StoreReader, postgres: Bool, at midnight: Int64) throws
        -> (paid: Int64, mrr: [String: Int64], mrrProceeds: [String: Int64])
    {
        var paid: Int64 = 0
        var mrr: [String: Int64] = [:]
        var mrrProceeds: [String: Int64] = [:]
        for row in try reader.sql(
            """
            \(orders(postgres: postgres))
            SELECT currency, COUNT(*), SUM(price), SUM((price * 8500 + 5000) / 10000) FROM orders
            WHERE voided_at IS NULL AND start_at <= \(midnight) AND \(midnight) < end_at
            GROUP BY currency
            """)
        {
            paid += try row.integer(1)
            mrr[try row.text(0)] = try row.integer(2)
            mrrProceeds[try row.text(0)] = try row.integer(3)
        }
        return (paid, mrr, mrrProceeds)
    }
}
