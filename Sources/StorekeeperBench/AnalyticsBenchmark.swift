import AppStoreModels
import Entitlements
import Foundation
import Storage

/// `make bench`, analytics: the reads behind every analytics request (running sums before the
/// range, then daily totals per day and currency), timed over aggregates of `customers`
/// generated customers with 10 transactions each (1,000,000 transactions for 100,000), on
/// SQLite (and PostgreSQL when `STOREKEEPER_BENCH_POSTGRES_URL` is set). The aggregates are
/// filled the way ingestion fills them: each customer's `AnalyticsContribution` applied.
enum AnalyticsBenchmark {
    static let day: Int64 = 86_400_000
    static let base: Int64 = 1_704_067_200_000  // 2024-01-01

    static let catalog = ProductCatalog(products: [
        CatalogProduct(
            productId: "monthly", kind: .autoRenewable, subscriptionGroup: "premium",
            duration: SubscriptionPeriod(value: 1, unit: .month)),
        CatalogProduct(
            productId: "yearly", kind: .autoRenewable, subscriptionGroup: "premium",
            duration: SubscriptionPeriod(value: 1, unit: .year)),
    ])

    /// Ten transactions of one customer: monthly renewals, a trial first for some, a refund now
    /// and then, spread over two years.
    static func facts(customer: Int, random: inout SystemRandomNumberGenerator) -> [Fact] {
        let currency = ["USD", "EUR", "GBP"][customer % 3]
        let storefront = ["USA", "DEU", "GBR", "FRA"][customer % 4]
        var start = base + Int64.random(in: 0..<(700 * day), using: &random)
        var facts: [Fact] = []
        for period in 0..<10 {
            let trial = period == 0 && customer % 2 == 0
            var fact = TransactionFact(
                transactionId: "c\(customer)-t\(period)", originalTransactionId: "c\(customer)", productId: "monthly",
                subscriptionGroup: "premium", purchaseDate: Timestamp(millisecondsSince1970: start),
                expiresDate: Timestamp(millisecondsSince1970: start + 30 * day),
                signedDate: Timestamp(millisecondsSince1970: start), periodType: trial ? .trial : .normal,
                environment: .production, price: trial ? 0 : 9990, currency: currency, storefront: storefront)
            if !trial, Int.random(in: 0..<20, using: &random) == 0 {
                fact.revocationDate = Timestamp(millisecondsSince1970: start + 3 * day)
                fact.revocationType = .refundFull
            }
            facts.append(.transaction(fact))
            start += 30 * day
        }
        return facts
    }

    static func run(store: any Store, customers: Int, label: String) async throws {
        let appId = "bench-analytics"
        let now = Timestamp(millisecondsSince1970: base + 800 * day)
        try await store.write { tx in
            try tx.saveApp(AppRecord(id: appId, bundleId: "com.example.bench", environments: [.production]), at: now)
            try tx.saveCatalog(appId: appId, catalog, at: now)
        }
        var random = SystemRandomNumberGenerator()
        let fill = try await timed {
            var next = 0
            while next < customers {
                let batch = next..<min(customers, next + 1000)
                let contributions = batch.map { customer in
                    let customerFacts = facts(customer: customer, random: &random)
                    return AnalyticsContribution.all(
                        facts: customerFacts, environment: .production, catalog: catalog, rule: CommissionRule(),
                        now: now)
                }
                try await store.write { tx in
                    for (offset, contribution) in contributions.enumerated() {
                        let customer = try tx.ensureCustomer(
                            appId: appId, appUserId: "user-\(batch.lowerBound + offset)", at: now)
                        try tx.applyAnalyticsContribution(
                            customerId: customer.id, appId: appId, environment: .production, contribution.daily)
                        try tx.applyAnalyticsPeriods(
                            customerId: customer.id, appId: appId, environment: .production, contribution.periods)
                        try tx.applyAnalyticsCohorts(
                            customerId: customer.id, appId: appId, environment: .production, contribution.cohorts)
                    }
                }
                next = batch.upperBound
            }
        }
        let (rows, cohortRows) = try await store.read {
            (try $0.analyticsRows(appId: appId).count, try $0.analyticsCohortRows(appId: appId))
        }
        print(
            "\(label): \(customers) customers, \(customers * 10) transactions -> \(rows) daily rows, "
                + "\(cohortRows.retention.count) retention and \(cohortRows.ltv.count) LTV rows, "
                + "filled in \(String(format: "%.1f", fill)) s")
        let end = CalendarDay(containing: now)
        for (name, days, filter) in [
            ("28 days", Int64(28), AnalyticsFilter()), ("1 year", Int64(365), AnalyticsFilter()),
            ("3 years", Int64(1095), AnalyticsFilter()),
            ("1 year, storefront DEU", Int64(365), AnalyticsFilter(storefront: "DEU")),
        ] {
            let start = end.adding(days: -(days - 1))
            // A daily series (the default resolution, the most churn windows): one window per
            // day, the last one through now.
            let windows = (0..<days).map { offset in
                let day = start.adding(days: offset)
                return AnalyticsChurnWindow(from: day.start, through: min(day.adding(days: 1).start, now))
            }
            for churn in [false, true] {
                var samples: [Double] = []
                for _ in 0..<20 {
                    samples.append(
                        try await timed {
                            _ = try await store.read { reader in
                                (
                                    try reader.analyticsTotalsBefore(
                                        appId: appId, environment: .production, day: start, filter: filter),
                                    try reader.analyticsDailyTotals(
                                        appId: appId, environment: .production, from: start,
                                        through: end.adding(days: 1), filter: filter),
                                    // The current bucket's figures at now.
                                    try reader.analyticsActiveAt(
                                        appId: appId, environment: .production, instant: now, filter: filter),
                                    churn
                                        ? try reader.analyticsChurnEnds(
                                            appId: appId, environment: .production, windows: windows, filter: filter)
                                        : []
                                )
                            }
                        })
                }
                samples.sort()
                let what =
                    churn ? "churn request reads (the same + ended runs summed per day)" : "analytics request reads"
                print(
                    "  \(what), \(name): median \(String(format: "%.1f", samples[10] * 1000)) ms, "
                        + "max \(String(format: "%.1f", samples[19] * 1000)) ms (target < 200 ms)")
            }
        }
        // Retention and LTV: one read of the cohort months' rows each (the answer's whole work
        // but the JSON), over the last 12 and the last 36 cohort months. LTV as for a reporting
        // currency with EUR and GBP rates changing on the first of every month for two years.
        let rateDays = (0..<24).map { CalendarDay(year: 2024 + $0 / 12, month: $0 % 12 + 1, day: 1) }
        for (name, months, filter) in [
            ("12 months", 12, AnalyticsFilter()), ("36 months", 36, AnalyticsFilter()),
            ("12 months, storefront DEU", 12, AnalyticsFilter(storefront: "DEU")),
        ] {
            let last = CalendarDay(year: end.year, month: end.month, day: 1)
            let index = end.year * 12 + end.month - 1 - (months - 1)
            let first = CalendarDay(year: index / 12, month: index % 12 + 1, day: 1)
            for metric in ["retention", "ltv"] {
                var samples: [Double] = []
                for _ in 0..<20 {
                    samples.append(
                        try await timed {
                            _ = try await store.read { reader in
                                metric == "retention"
                                    ? try reader.analyticsRetention(
                                        appId: appId, environment: .production, fromMonth: first, throughMonth: last,
                                        filter: filter
                                    ).count
                                    : try reader.analyticsLTV(
                                        appId: appId, environment: .production, fromMonth: first, throughMonth: last,
                                        filter: filter, dayBoundaries: rateDays
                                    ).count
                            }
                        })
                }
                samples.sort()
                print(
                    "  \(metric) request reads, \(name): median \(String(format: "%.1f", samples[10] * 1000)) ms, "
                        + "max \(String(format: "%.1f", samples[19] * 1000)) ms (target < 200 ms)")
            }
        }
    }

    static func timed(_ body: () async throws -> Void) async rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
