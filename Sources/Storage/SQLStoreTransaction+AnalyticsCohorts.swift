import AppStoreModels
import Entitlements

/// Retention cohorts and realized LTV (migration 0018): per-customer contributions and the
/// summed rows, kept like the daily rows (the difference gathered per transaction, written
/// sorted just before it commits).
extension SQLStoreTransaction {
    /// A customer's stored `CohortContribution`, entries in key order.
    struct StoredCohortContribution: Codable, Equatable {
        struct RetentionEntry: Codable, Equatable {
            var key: RetentionCohortKey
            var subscriptions: Int64
        }
        struct LTVEntry: Codable, Equatable {
            var key: LTVCohortKey
            var values: [Int64]
        }
        var retention: [RetentionEntry]
        var ltv: [LTVEntry]

        init(_ contribution: CohortContribution) {
            retention = contribution.retention.filter { $0.value != 0 }.sorted { $0.key < $1.key }.map {
                RetentionEntry(key: $0.key, subscriptions: $0.value)
            }
            ltv = contribution.ltv.filter { !$0.value.isZero }.sorted { $0.key < $1.key }.map {
                LTVEntry(key: $0.key, values: $0.value.values)
            }
        }

        func contribution() throws(StoreError) -> CohortContribution {
            var result = CohortContribution()
            for entry in retention { result.retention[entry.key, default: 0] += entry.subscriptions }
            for entry in ltv {
                guard let measures = LTVMeasures(values: entry.values) else {
                    throw StoreError(
                        .corruptValue, "analytics_cohort_contributions: an entry has the wrong number of values")
                }
                result.ltv[entry.key] = (result.ltv[entry.key] ?? LTVMeasures()) + measures
            }
            return result
        }
    }

    /// Retention and LTV differences of every app this transaction changed, by app and
    /// environment then key: the order rows are written in.
    struct PendingCohortRows {
        struct Scope: Hashable, Comparable {
            var appId: String
            var environment: String
            static func < (lhs: Scope, rhs: Scope) -> Bool {
                (lhs.appId, lhs.environment) < (rhs.appId, rhs.environment)
            }
        }
        var retention: [Scope: [RetentionCohortKey: Int64]] = [:]
        var ltv: [Scope: [LTVCohortKey: LTVMeasures]] = [:]
    }

    /// Decoded cohort contributions by customer, checked by content like the daily ones
    /// (`AnalyticsContributionCache`): each ingestion compares the customer's stored one with
    /// its new one.
    static let cohortContributions = StoredTextCache<AnalyticsContributionCache.Key, StoredCohortContribution>(
        byteBudget: 16 << 20, bytesAfterEviction: 12 << 20)

    static func storedCohortContribution(_ text: String) throws(StoreError) -> StoredCohortContribution {
        if let read = ColumnJSONReader.cohorts(from: text) { return read }
        return try decode(
            StoredCohortContribution.self, text, column: "analytics_cohort_contributions.contribution_json")
    }

    @discardableResult
    func applyAnalyticsCohorts(
        customerId: Int64, appId: String, environment: AppStoreEnvironment, _ contribution: CohortContribution
    ) throws -> Bool {
        let entries = StoredCohortContribution(contribution)
        let cacheKey = AnalyticsContributionCache.Key(customerId: customerId, environment: environment.rawValue)
        let stored = try row(
            "SELECT contribution_json FROM analytics_cohort_contributions WHERE customer_id = $1 AND environment = $2",
            .integer(customerId), .text(environment.rawValue))
        let previous = try stored.map { row throws(StoreError) in
            try Self.cohortContributions.value(cacheKey, text: try row.text(0), decode: Self.storedCohortContribution)
        }
        guard previous != entries else { return false }
        if previous == nil, entries.retention.isEmpty, entries.ltv.isEmpty { return false }
        let old = try previous?.contribution() ?? CohortContribution()
        let new = try entries.contribution()
        let scope = PendingCohortRows.Scope(appId: appId, environment: environment.rawValue)
        var retention = pendingAnalyticsCohorts.retention[scope] ?? [:]
        for (key, count) in new.retention { retention[key, default: 0] += count }
        for (key, count) in old.retention { retention[key, default: 0] -= count }
        pendingAnalyticsCohorts.retention[scope] = retention
        var ltv = pendingAnalyticsCohorts.ltv[scope] ?? [:]
        for (key, measures) in new.ltv { ltv[key] = (ltv[key] ?? LTVMeasures()) + measures }
        for (key, measures) in old.ltv { ltv[key] = (ltv[key] ?? LTVMeasures()) - measures }
        pendingAnalyticsCohorts.ltv[scope] = ltv
        if entries.retention.isEmpty && entries.ltv.isEmpty {
            _ = try execute(
                "DELETE FROM analytics_cohort_contributions WHERE customer_id = $1 AND environment = $2",
                .integer(customerId), .text(environment.rawValue))
            Self.cohortContributions.forget(cacheKey)
        } else {
            let json = Self.jsonText(entries)
            _ = try execute(
                """
                INSERT INTO analytics_cohort_contributions (customer_id, environment, app_id, contribution_json)
                VALUES ($1, $2, $3, $4)
                ON CONFLICT (customer_id, environment) DO UPDATE SET contribution_json = excluded.contribution_json
                """, .integer(customerId), .text(environment.rawValue), .text(appId), .text(json))
            // Remembered before the commit: if it rolls back, the text read next differs.
            Self.cohortContributions.remember(entries, text: json, for: cacheKey)
        }
        return true
    }

    private static let retentionInsert = """
        INSERT INTO analytics_retention (app_id, environment, cohort_month, product_id, subscription_group, storefront,
                                         paid_renewals, subscriptions)
        """
    private static let retentionConflict =
        "ON CONFLICT (app_id, environment, cohort_month, product_id, subscription_group, storefront, paid_renewals)"
    private static let ltvInsert = """
        INSERT INTO analytics_ltv (app_id, environment, cohort_month, product_id, subscription_group, storefront, day,
                                   currency, customers, d7, d30, d90, d365)
        """
    private static let ltvConflict =
        "ON CONFLICT (app_id, environment, cohort_month, product_id, subscription_group, storefront, day, currency)"

    private static func retentionValues(_ scope: PendingCohortRows.Scope, _ key: RetentionCohortKey, _ count: Int64)
        -> [SQLValue]
    {
        [
            .text(scope.appId), .text(scope.environment), .integer(key.cohortMonth.daysSince1970), .text(key.productId),
            .text(key.subscriptionGroup), .text(key.storefront), .integer(key.paidRenewals), .integer(count),
        ]
    }

    private static func ltvValues(_ scope: PendingCohortRows.Scope, _ key: LTVCohortKey, _ measures: LTVMeasures)
        -> [SQLValue]
    {
        [
            .text(scope.appId), .text(scope.environment), .integer(key.cohortMonth.daysSince1970), .text(key.productId),
            .text(key.subscriptionGroup), .text(key.storefront), .integer(key.day.daysSince1970), .text(key.currency),
        ] + measures.values.map { SQLValue.integer($0) }
    }

    /// Writes the gathered retention and LTV differences, sorted (retention rows, then LTV rows).
    func flushAnalyticsCohorts() throws {
        let pending = pendingAnalyticsCohorts
        pendingAnalyticsCohorts = PendingCohortRows()
        var retention: [[SQLValue]] = []
        for scope in pending.retention.keys.sorted() {
            for (key, count) in pending.retention[scope]!.sorted(by: { $0.key < $1.key }) where count != 0 {
                retention.append(Self.retentionValues(scope, key, count))
            }
        }
        var ltv: [[SQLValue]] = []
        for scope in pending.ltv.keys.sorted() {
            for (key, measures) in pending.ltv[scope]!.sorted(by: { $0.key < $1.key }) where !measures.isZero {
                ltv.append(Self.ltvValues(scope, key, measures))
            }
        }
        if !retention.isEmpty {
            _ = try insertRows(
                into: Self.retentionInsert,
                onConflict: Self.retentionConflict
                    + " DO UPDATE SET subscriptions = analytics_retention.subscriptions + excluded.subscriptions",
                width: 8, retention)
        }
        if !ltv.isEmpty {
            let updates = ["customers", "d7", "d30", "d90", "d365"].map {
                "\($0) = analytics_ltv.\($0) + excluded.\($0)"
            }
            _ = try insertRows(
                into: Self.ltvInsert,
                onConflict: Self.ltvConflict + " DO UPDATE SET " + updates.joined(separator: ", "),
                width: 13, ltv)
        }
    }

    func reconcileAnalyticsCohorts(appId: String) throws -> Int {
        try flushAnalyticsDaily()
        // As `reconcileAnalyticsDaily`: the rows locked first, in key order.
        let lock = dialect == .postgres ? " FOR UPDATE" : ""
        let current = try analyticsCohortRows(appId: appId, lock: lock)
        var retentionSums: [PendingCohortRows.Scope: [RetentionCohortKey: Int64]] = [:]
        var ltvSums: [PendingCohortRows.Scope: [LTVCohortKey: LTVMeasures]] = [:]
        for row in try rows(
            "SELECT environment, contribution_json FROM analytics_cohort_contributions WHERE app_id = $1",
            .text(appId))
        {
            let scope = PendingCohortRows.Scope(appId: appId, environment: try row.text(0))
            let contribution = try Self.decode(
                StoredCohortContribution.self, try row.text(1),
                column: "analytics_cohort_contributions.contribution_json"
            ).contribution()
            for (key, count) in contribution.retention { retentionSums[scope, default: [:]][key, default: 0] += count }
            for (key, measures) in contribution.ltv {
                ltvSums[scope, default: [:]][key] = (ltvSums[scope]?[key] ?? LTVMeasures()) + measures
            }
        }
        var retentionCurrent: [PendingCohortRows.Scope: [RetentionCohortKey: Int64]] = [:]
        for row in current.retention {
            retentionCurrent[.init(appId: appId, environment: row.environment), default: [:]][row.key] =
                row.subscriptions
        }
        var ltvCurrent: [PendingCohortRows.Scope: [LTVCohortKey: LTVMeasures]] = [:]
        for row in current.ltv {
            ltvCurrent[.init(appId: appId, environment: row.environment), default: [:]][row.key] = row.measures
        }
        var retention: [[SQLValue]] = []
        for scope in Set(retentionCurrent.keys).union(retentionSums.keys).sorted() {
            let have = retentionCurrent[scope] ?? [:]
            let want = retentionSums[scope] ?? [:]
            for key in Set(have.keys).union(want.keys).sorted() where (have[key] ?? 0) != (want[key] ?? 0) {
                retention.append(Self.retentionValues(scope, key, want[key] ?? 0))
            }
        }
        var ltv: [[SQLValue]] = []
        for scope in Set(ltvCurrent.keys).union(ltvSums.keys).sorted() {
            let have = ltvCurrent[scope] ?? [:]
            let want = ltvSums[scope] ?? [:]
            for key in Set(have.keys).union(want.keys).sorted()
            where (have[key] ?? LTVMeasures()) != (want[key] ?? LTVMeasures()) {
                ltv.append(Self.ltvValues(scope, key, want[key] ?? LTVMeasures()))
            }
        }
        // Absolute values (a row no contribution names becomes zeros, which reads as no row).
        if !retention.isEmpty {
            _ = try insertRows(
                into: Self.retentionInsert,
                onConflict: Self.retentionConflict + " DO UPDATE SET subscriptions = excluded.subscriptions",
                width: 8, retention)
        }
        if !ltv.isEmpty {
            let updates = ["customers", "d7", "d30", "d90", "d365"].map { "\($0) = excluded.\($0)" }
            _ = try insertRows(
                into: Self.ltvInsert,
                onConflict: Self.ltvConflict + " DO UPDATE SET " + updates.joined(separator: ", "),
                width: 13, ltv)
        }
        return retention.count + ltv.count
    }

    func analyticsCohortRows(appId: String) throws -> AnalyticsCohortRows {
        try flushAnalyticsDaily()
        return try analyticsCohortRows(appId: appId, lock: "")
    }

    private func analyticsCohortRows(appId: String, lock: String) throws -> AnalyticsCohortRows {
        let retention = try rows(
            """
            SELECT environment, cohort_month, product_id, subscription_group, storefront, paid_renewals, subscriptions
            FROM analytics_retention WHERE app_id = $1
            ORDER BY environment, cohort_month, product_id, subscription_group, storefront, paid_renewals\(lock)
            """, .text(appId)
        ).compactMap { row throws(StoreError) -> AnalyticsCohortRows.Retention? in
            let count = try row.integer(6)
            guard count != 0 else { return nil }
            return AnalyticsCohortRows.Retention(
                environment: try row.text(0),
                key: RetentionCohortKey(
                    cohortMonth: CalendarDay(daysSince1970: try row.integer(1)), productId: try row.text(2),
                    subscriptionGroup: try row.text(3), storefront: try row.text(4), paidRenewals: try row.integer(5)),
                subscriptions: count)
        }
        let ltv = try rows(
            """
            SELECT environment, cohort_month, product_id, subscription_group, storefront, day, currency,
                   customers, d7, d30, d90, d365
            FROM analytics_ltv WHERE app_id = $1
            ORDER BY environment, cohort_month, product_id, subscription_group, storefront, day, currency\(lock)
            """, .text(appId)
        ).compactMap { row throws(StoreError) -> AnalyticsCohortRows.LTV? in
            let measures = try Self.ltvMeasures(row, from: 7)
            guard !measures.isZero else { return nil }
            return AnalyticsCohortRows.LTV(
                environment: try row.text(0),
                key: LTVCohortKey(
                    cohortMonth: CalendarDay(daysSince1970: try row.integer(1)), productId: try row.text(2),
                    subscriptionGroup: try row.text(3), storefront: try row.text(4),
                    day: CalendarDay(daysSince1970: try row.integer(5)), currency: try row.text(6)),
                measures: measures)
        }
        return AnalyticsCohortRows(retention: retention, ltv: ltv)
    }

    private static func ltvMeasures(_ row: SQLRow, from first: Int) throws(StoreError) -> LTVMeasures {
        LTVMeasures(
            customers: try row.integer(first), d7: try row.integer(first + 1), d30: try row.integer(first + 2),
            d90: try row.integer(first + 3), d365: try row.integer(first + 4))
    }

    func analyticsRetention(
        appId: String, environment: AppStoreEnvironment, fromMonth: CalendarDay, throughMonth: CalendarDay,
        filter: AnalyticsFilter
    ) throws -> [RetentionCohortTotal] {
        try flushAnalyticsDaily()
        let (conditions, arguments) = Self.analyticsFilterClause(filter, firstParameter: 5)
        return try connection.query(
            """
            SELECT cohort_month, product_id, paid_renewals, SUM(subscriptions) FROM analytics_retention
            WHERE app_id = $1 AND environment = $2 AND cohort_month >= $3 AND cohort_month <= $4\(conditions)
            GROUP BY cohort_month, product_id, paid_renewals
            HAVING SUM(subscriptions) <> 0
            ORDER BY cohort_month, product_id, paid_renewals
            """,
            [
                .text(appId), .text(environment.rawValue), .integer(fromMonth.daysSince1970),
                .integer(throughMonth.daysSince1970),
            ] + arguments
        ).map { row throws(StoreError) in
            RetentionCohortTotal(
                cohortMonth: CalendarDay(daysSince1970: try row.integer(0)), productId: try row.text(1),
                paidRenewals: try row.integer(2), subscriptions: try row.integer(3))
        }
    }

    func analyticsLTV(
        appId: String, environment: AppStoreEnvironment, fromMonth: CalendarDay, throughMonth: CalendarDay,
        filter: AnalyticsFilter, dayBoundaries: [CalendarDay]?
    ) throws -> [LTVCohortTotal] {
        try flushAnalyticsDaily()
        let (conditions, arguments) = Self.analyticsFilterClause(filter, firstParameter: 5)
        // The days are grouped into the spans between boundaries (each boundary starts a span);
        // `nil`: one group per day; none: one group for all.
        let span: String
        var spanArguments: [SQLValue] = []
        switch dayBoundaries {
        case nil: span = "day"
        case let boundaries? where boundaries.isEmpty: span = "cohort_month"
        case let boundaries?:
            let first = 5 + arguments.count
            let sorted = Array(Set(boundaries)).sorted()
            let cases = sorted.enumerated().map { index, _ in "WHEN day < $\(first + index) THEN \(index)" }
            span = "CASE \(cases.joined(separator: " ")) ELSE \(sorted.count) END"
            spanArguments = sorted.map { .integer($0.daysSince1970) }
        }
        return try connection.query(
            """
            SELECT cohort_month, \(span), currency, MAX(day), SUM(customers), SUM(d7), SUM(d30), SUM(d90), SUM(d365)
            FROM analytics_ltv
            WHERE app_id = $1 AND environment = $2 AND cohort_month >= $3 AND cohort_month <= $4\(conditions)
            GROUP BY cohort_month, \(span), currency
            ORDER BY cohort_month, 4, currency
            """,
            [
                .text(appId), .text(environment.rawValue), .integer(fromMonth.daysSince1970),
                .integer(throughMonth.daysSince1970),
            ] + arguments + spanArguments
        ).compactMap { row throws(StoreError) -> LTVCohortTotal? in
            let measures = try Self.ltvMeasures(row, from: 4)
            guard !measures.isZero else { return nil }
            return LTVCohortTotal(
                cohortMonth: CalendarDay(daysSince1970: try row.integer(0)),
                day: CalendarDay(daysSince1970: try row.integer(3)), currency: try row.text(2), measures: measures)
        }
    }
}
