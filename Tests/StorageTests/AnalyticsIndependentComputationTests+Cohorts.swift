import AppStoreModels
import Entitlements
import Foundation
import Testing

@testable import Storage

/// Retention cohorts and realized LTV of the random history, computed in plain SQL from the
/// stored facts and compared exactly with the rows `AnalyticsAggregation` keeps; with `play`,
/// the world's Google Play customers too (`IndependentPlaySQL`), both stores in one cohort.
extension AnalyticsIndependentComputationTests {
    static func expectCohortsAgree(store: any Store, postgres: Bool, play: Bool = false) async throws {
        let firstMonth = CalendarDay(year: 2025, month: 1, day: 1)
        let lastMonth = CalendarDay(year: 2030, month: 12, day: 1)
        let (retention, ltv, expectedRetention, expectedLTV, expectedCustomers) = try await store.read { reader in
            (
                try reader.analyticsRetention(
                    appId: Self.appId, environment: .production, fromMonth: firstMonth, throughMonth: lastMonth,
                    filter: AnalyticsFilter()),
                try reader.analyticsLTV(
                    appId: Self.appId, environment: .production, fromMonth: firstMonth, throughMonth: lastMonth,
                    filter: AnalyticsFilter(), dayBoundaries: nil),
                try IndependentSQL.retention(reader: reader, postgres: postgres).merging(
                    play ? IndependentPlaySQL.retention(reader: reader, postgres: postgres) : [:], uniquingKeysWith: +),
                play
                    ? try IndependentPlaySQL.ltvBothStores(reader: reader, postgres: postgres)
                    : try IndependentSQL.ltv(reader: reader, postgres: postgres),
                play
                    ? try IndependentPlaySQL.cohortCustomersBothStores(reader: reader, postgres: postgres)
                    : try IndependentSQL.cohortCustomers(reader: reader, postgres: postgres)
            )
        }
        func label(_ month: CalendarDay) -> String { String(month.iso8601.prefix(7)) }
        var kept: [String: Int64] = [:]
        var byProduct: [String: Int64] = [:]
        for total in retention {
            byProduct[total.productId, default: 0] += total.subscriptions
            kept["\(label(total.cohortMonth))/\(total.paidRenewals)", default: 0] += total.subscriptions
        }
        // The catalog's subscription and the one only Apple's signed type makes a subscription.
        #expect(Set(byProduct.keys) == ["monthly", "legacy"])
        #expect(byProduct["legacy", default: 0] > 10)
        #expect(kept.count > 40)
        #expect(kept == expectedRetention)

        var keptLTV: [String: [Int64]] = [:]
        var keptCustomers: [String: Int64] = [:]
        for total in ltv {
            keptCustomers[label(total.cohortMonth), default: 0] += total.measures.customers
            let key = "\(label(total.cohortMonth))/\(total.currency)"
            let sums = keptLTV[key] ?? [0, 0, 0, 0]
            keptLTV[key] = zip(sums, [total.measures.d7, total.measures.d30, total.measures.d90, total.measures.d365])
                .map { $0 + $1 }
        }
        keptLTV = keptLTV.filter { $0.value.contains { $0 != 0 } }
        // Summed over spans of days (as an answer converting at monthly rates reads them), or
        // over all days, the same totals.
        for boundaries in [[], (1...12).map { CalendarDay(year: 2026, month: $0, day: 1) }] {
            let spans = try await store.read { reader in
                try reader.analyticsLTV(
                    appId: Self.appId, environment: .production, fromMonth: firstMonth, throughMonth: lastMonth,
                    filter: AnalyticsFilter(), dayBoundaries: boundaries)
            }
            #expect(spans.count < ltv.count)
            var summed: [String: [Int64]] = [:]
            for total in spans {
                let key = "\(label(total.cohortMonth))/\(total.currency)"
                let sums = summed[key] ?? [0, 0, 0, 0]
                summed[key] = zip(
                    sums, [total.measures.d7, total.measures.d30, total.measures.d90, total.measures.d365]
                )
                .map { $0 + $1 }
            }
            #expect(summed.filter { $0.value.contains { $0 != 0 } } == keptLTV, "spans \(boundaries.count)")
        }
        #expect(keptLTV.count > 15)
        #expect(keptLTV == expectedLTV)
        #expect(keptCustomers.values.reduce(0, +) == Int64(Self.customers + (play ? Self.playCustomers / 2 : 0)))
        #expect(keptCustomers == expectedCustomers)
    }
}

extension IndependentSQL {
    /// `YYYY-MM` of a millisecond instant, in UTC.
    static func month(_ milliseconds: String, postgres: Bool) -> String {
        postgres
            ? "to_char(to_timestamp((\(milliseconds)) / 1000) AT TIME ZONE 'UTC', 'YYYY-MM')"
            : "strftime('%Y-%m', (\(milliseconds)) / 1000, 'unixepoch')"
    }

    /// Subscriptions by the month of their first paid, unrefunded payment and the number of such
    /// payments after it (no offers in this history: every payment is full price), keyed
    /// `YYYY-MM/renewals`.
    static func retention(reader: any StoreReader, postgres: Bool) throws -> [String: Int64] {
        let payments = """
            SELECT \(field("originalTransactionId", postgres: postgres)) AS original,
                   \(number("purchaseDate", postgres: postgres)) AS purchase
            FROM latest
            WHERE \(field("ownership", postgres: postgres)) = 'PURCHASED' AND \(number("price", postgres: postgres)) > 0
              AND \(field("revocationDate", postgres: postgres)) IS NULL
              AND \(subscription(postgres: postgres))
            """
        var result: [String: Int64] = [:]
        for row in try reader.sql(
            """
            \(latest(postgres: postgres))
            SELECT \(month("first_payment", postgres: postgres)), renewals, COUNT(*) FROM (
                SELECT original, MIN(purchase) AS first_payment, COUNT(*) - 1 AS renewals
                FROM (\(payments)) payments GROUP BY original
            ) subscriptions GROUP BY 1, 2
            """)
        {
            result["\(try row.text(0))/\(try row.integer(1))"] = try row.integer(2)
        }
        return result
    }

    /// The customers' first purchase (not family shared) per customer, as a CTE after `latest`.
    static func firsts(postgres: Bool) -> String {
        """
        , firsts AS (
            SELECT customer AS first_customer, MIN(\(number("purchaseDate", postgres: postgres))) AS first_purchase
            FROM latest WHERE \(field("ownership", postgres: postgres)) = 'PURCHASED' GROUP BY customer
        )
        """
    }

    /// Net revenue (price, or 0 when refunded in full) of paid transactions purchased within 7,
    /// 30, 90 and 365 days of the customer's first purchase, keyed `YYYY-MM/currency` by the
    /// month of that first purchase.
    static func ltv(reader: any StoreReader, postgres: Bool) throws -> [String: [Int64]] {
        let price = number("price", postgres: postgres)
        let elapsed = "(\(number("purchaseDate", postgres: postgres)) - first_purchase)"
        let net =
            "(\(price) - CASE WHEN \(field("revocationType", postgres: postgres)) = 'REFUND_FULL' THEN \(price) ELSE 0 END)"
        let horizons = [7, 30, 90, 365].map { days in
            "SUM(CASE WHEN \(elapsed) < \(Int64(days) * 86_400_000) THEN \(net) ELSE 0 END)"
        }
        var result: [String: [Int64]] = [:]
        for row in try reader.sql(
            """
            \(latest(postgres: postgres))\(firsts(postgres: postgres))
            SELECT \(month("first_purchase", postgres: postgres)), \(field("currency", postgres: postgres)),
                   \(horizons.joined(separator: ", "))
            FROM latest JOIN firsts ON first_customer = customer
            WHERE \(field("ownership", postgres: postgres)) = 'PURCHASED' AND \(price) > 0
            GROUP BY 1, 2
            """)
        {
            let sums = try (2...5).map { try row.integer($0) }
            if sums.contains(where: { $0 != 0 }) { result["\(try row.text(0))/\(try row.text(1))"] = sums }
        }
        return result
    }

    /// Customers by the month of their first purchase.
    static func cohortCustomers(reader: any StoreReader, postgres: Bool) throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        for row in try reader.sql(
            """
            \(latest(postgres: postgres))\(firsts(postgres: postgres))
            SELECT \(month("first_purchase", postgres: postgres)), COUNT(*) FROM firsts GROUP BY 1
            """)
        {
            result[try row.text(0)] = try row.integer(1)
        }
        return result
    }
}
