import AppStoreModels
import Entitlements

/// Analytics periods (migration 0015): each customer's active subscription periods to the
/// millisecond, for figures at an instant and churn.
extension SQLStoreTransaction {
    private static let periodColumns = """
        transaction_id, subscription, product_id, subscription_group, storefront, currency, activity, start_at,
        end_at, mrr_gross, mrr_proceeds, run_start_at, next_run_start_at, churn_reason, store
        """

    func applyAnalyticsPeriods(
        customerId: Int64, appId: String, environment: AppStoreEnvironment, _ periods: [AnalyticsPeriod]
    ) throws -> Bool {
        // The last wanted of each id (figures never repeat one; a primary key forbids storing two).
        var wantedPlace: [String: Int] = [:]
        wantedPlace.reserveCapacity(periods.count)
        for (place, period) in periods.enumerated() { wantedPlace[period.transactionId] = place }
        var kept = [Bool](repeating: false, count: periods.count)
        var stale: [String] = []
        // Each stored row is compared where the engine holds it, against the wanted period of its
        // id: reading every stored period into an `AnalyticsPeriod` (nine strings) and sorting
        // both lists was most of this function for a long history, where one period changes.
        try scan(
            """
            SELECT \(Self.periodColumns) FROM analytics_periods
            WHERE customer_id = $1 AND environment = $2
            """, .integer(customerId), .text(environment.rawValue)
        ) { row throws(StoreError) in
            let id = try row.text(0)
            // The same id to the byte (the key's comparison; Swift's equates Unicode spellings):
            // a row that differs is rewritten in place below.
            if let place = wantedPlace[id], StoredText.sameBytes(id, periods[place].transactionId) {
                if try Self.row(row, holds: periods[place]) { kept[place] = true }
            } else {
                stale.append(id)
            }
        }
        // Only the periods that changed are rewritten: a long history adds one period at a time,
        // and rewriting all of them made each new fact cost the whole history. A changed period
        // is updated in place (one statement; it was deleted, then inserted again), and only the
        // ids no longer wanted are deleted.
        let fresh = wantedPlace.values.filter { !kept[$0] }.sorted().map { periods[$0] }
        guard !stale.isEmpty || !fresh.isEmpty else { return false }
        stale.sort()
        var next = 0
        while next < stale.count {
            let chunk = stale[next..<min(stale.count, next + 500)]
            next += chunk.count
            let placeholders = (0..<chunk.count).map { "$\($0 + 3)" }.joined(separator: ", ")
            _ = try connection.execute(
                """
                DELETE FROM analytics_periods
                WHERE customer_id = $1 AND environment = $2 AND transaction_id IN (\(placeholders))
                """, [.integer(customerId), .text(environment.rawValue)] + chunk.map { SQLValue.text($0) })
        }
        guard !fresh.isEmpty else { return true }
        _ = try insertRows(
            into: """
                INSERT INTO analytics_periods (customer_id, environment, app_id, \(Self.periodColumns))
                """,
            onConflict: Self.periodUpsert, width: 18,
            fresh.map { period in
                [
                    .integer(customerId), .text(environment.rawValue), .text(appId), .text(period.transactionId),
                    .text(period.subscription), .text(period.productId), .text(period.subscriptionGroup),
                    .text(period.storefront), .text(period.currency), .text(period.activity.rawValue),
                    SQLValue(period.start), SQLValue(period.end), .integer(period.mrrGross),
                    .integer(period.mrrProceeds), SQLValue(period.run?.start), SQLValue(period.run?.nextStart),
                    SQLValue(period.run?.reason?.rawValue), .text(period.store.rawValue),
                ]
            })
        return true
    }

    /// A wanted period stored under its id already is rewritten with all its columns.
    private static let periodUpsert = """
        ON CONFLICT (customer_id, environment, transaction_id) DO UPDATE SET
            app_id = excluded.app_id, subscription = excluded.subscription, product_id = excluded.product_id,
            subscription_group = excluded.subscription_group, storefront = excluded.storefront,
            currency = excluded.currency, activity = excluded.activity, start_at = excluded.start_at,
            end_at = excluded.end_at, mrr_gross = excluded.mrr_gross, mrr_proceeds = excluded.mrr_proceeds,
            run_start_at = excluded.run_start_at, next_run_start_at = excluded.next_run_start_at,
            churn_reason = excluded.churn_reason, store = excluded.store
        """

    /// Whether a stored row (its columns as `periodColumns` lists them) reads back as `period`,
    /// as `period(_:)` would decode it; a value it would refuse (an unknown activity, reason or
    /// store) is not `period`, so the row is written again.
    static func row(_ row: SQLRowView, holds period: AnalyticsPeriod) throws(StoreError) -> Bool {
        guard
            row.holds(1, text: period.subscription), row.holds(2, text: period.productId),
            row.holds(3, text: period.subscriptionGroup), row.holds(4, text: period.storefront),
            row.holds(5, text: period.currency), row.holds(6, text: period.activity.rawValue),
            row.holds(14, text: period.store.rawValue)
        else { return false }
        guard try row.holds(7, integer: period.start.millisecondsSince1970) else { return false }
        guard try row.holds(8, integer: period.end.millisecondsSince1970) else { return false }
        guard try row.holds(9, integer: period.mrrGross) else { return false }
        guard try row.holds(10, integer: period.mrrProceeds) else { return false }
        // A run is read only when it has a start.
        guard let run = period.run else { return row.isNull(11) }
        let start = try row.holds(11, integer: run.start.millisecondsSince1970)
        let nextStart = try row.holds(12, integer: run.nextStart?.millisecondsSince1970)
        return start && nextStart && row.holds(13, text: run.reason?.rawValue)
    }

    /// The customer's stored periods in one environment, in transaction order (Swift's: a
    /// PostgreSQL collation may order ids with dots and dashes apart, so not `ORDER BY`).
    func analyticsPeriods(customerId: Int64, environment: AppStoreEnvironment) throws -> [AnalyticsPeriod] {
        try rows(
            """
            SELECT \(Self.periodColumns) FROM analytics_periods
            WHERE customer_id = $1 AND environment = $2
            """, .integer(customerId), .text(environment.rawValue)
        ).map { row throws(StoreError) in try Self.period(row) }.sorted { $0.transactionId < $1.transactionId }
    }

    private static func period(_ row: SQLRow) throws(StoreError) -> AnalyticsPeriod {
        let activity = try row.text(6)
        guard let parsed = SubscriptionActivity(rawValue: activity) else {
            throw StoreError(.corruptValue, "analytics_periods.activity: unknown value")
        }
        var run: AnalyticsPeriod.Run?
        if let start = try row.optionalTimestamp(11) {
            run = AnalyticsPeriod.Run(
                start: start, nextStart: try row.optionalTimestamp(12), reason: try churnReason(row, 13))
        }
        guard let store = AnalyticsStore(rawValue: try row.text(14)) else {
            throw StoreError(.corruptValue, "analytics_periods.store: unknown value")
        }
        return AnalyticsPeriod(
            transactionId: try row.text(0), subscription: try row.text(1), productId: try row.text(2),
            subscriptionGroup: try row.text(3), storefront: try row.text(4), currency: try row.text(5),
            activity: parsed, start: try row.timestamp(7), end: try row.timestamp(8), mrrGross: try row.integer(9),
            mrrProceeds: try row.integer(10), run: run, store: store)
    }

    func analyticsActiveAt(
        appId: String, environment: AppStoreEnvironment, instant: Timestamp, filter: AnalyticsFilter
    ) throws -> [AnalyticsActiveTotal] {
        let (conditions, arguments) = Self.analyticsFilterClause(filter, firstParameter: 4)
        return try connection.query(
            """
            SELECT activity, currency, COUNT(*), SUM(mrr_gross), SUM(mrr_proceeds) FROM analytics_periods
            WHERE app_id = $1 AND environment = $2 AND end_at > $3 AND start_at <= $3\(conditions)
            GROUP BY activity, currency ORDER BY activity, currency
            """, [.text(appId), .text(environment.rawValue), SQLValue(instant)] + arguments
        ).map { row throws(StoreError) in
            guard let activity = SubscriptionActivity(rawValue: try row.text(0)) else {
                throw StoreError(.corruptValue, "analytics_periods.activity: unknown value")
            }
            return AnalyticsActiveTotal(
                activity: activity, currency: try row.text(1), count: try row.integer(2),
                mrrGross: try row.integer(3), mrrProceeds: try row.integer(4))
        }
    }

    /// The window counts a churn statement is written for: a chunk is padded to the next one
    /// with windows that match nothing, so the statement texts (which SQLite keeps prepared per
    /// connection, about 0.3 MB for the largest) are a few per filter, whatever ranges clients
    /// ask for. The longest range, 3,660 daily windows, takes 8 statements of 512.
    static let churnStatementSizes = [8, 64, 512]

    func analyticsChurnEnds(
        appId: String, environment: AppStoreEnvironment, windows: [AnalyticsChurnWindow], filter: AnalyticsFilter
    ) throws -> [AnalyticsChurnEnds] {
        var ends = [AnalyticsChurnEnds](repeating: AnalyticsChurnEnds(), count: windows.count)
        let largest = Self.churnStatementSizes.last!
        var first = 0
        while first < windows.count {
            let chunk = windows[first..<min(first + largest, windows.count)]
            let size = Self.churnStatementSizes.first { $0 >= chunk.count } ?? largest
            var arguments: [SQLValue] = [.text(appId), .text(environment.rawValue)]
            var values: [String] = []
            for offset in 0..<size {
                let parameter = arguments.count + 1
                values.append(
                    "(CAST($\(parameter) AS BIGINT), CAST($\(parameter + 1) AS BIGINT), CAST($\(parameter + 2) AS BIGINT))"
                )
                if offset < chunk.count {
                    let window = chunk[chunk.startIndex + offset]
                    arguments += [.integer(Int64(first + offset)), SQLValue(window.from), SQLValue(window.through)]
                } else {
                    // Padding: no run ends in (0, 0].
                    arguments += [.integer(-1), .integer(0), .integer(0)]
                }
            }
            let (conditions, filterArguments) = Self.analyticsFilterClause(filter, firstParameter: arguments.count + 1)
            // Each window is an index range of the run ends' partial index (0023); the
            // database sums them, so only a few rows per window come back. `CROSS JOIN` keeps
            // SQLite's loop over the windows outside.
            let rows = try connection.query(
                """
                WITH windows (position, from_at, through_at) AS (VALUES \(values.joined(separator: ", ")))
                SELECT w.position, CASE WHEN p.next_run_start_at <= w.through_at THEN 1 ELSE 0 END, p.churn_reason,
                       COUNT(*)
                FROM windows w CROSS JOIN analytics_periods p
                WHERE p.app_id = $1 AND p.environment = $2 AND p.end_at > w.from_at AND p.end_at <= w.through_at
                  AND p.run_start_at IS NOT NULL AND p.run_start_at <= w.from_at\(conditions)
                GROUP BY w.position, CASE WHEN p.next_run_start_at <= w.through_at THEN 1 ELSE 0 END, p.churn_reason
                """, arguments + filterArguments)
            for row in rows {
                let position = Int(try row.integer(0))
                let count = try row.integer(3)
                guard chunk.indices.contains(position) else {
                    throw StoreError(.corruptValue, "analytics churn: window \(position) out of range")
                }
                ends[position].expired += count
                if try row.integer(1) == 1 {
                    ends[position].resubscribed += count
                } else {
                    ends[position].byReason[try Self.churnReason(row, 2), default: 0] += count
                }
            }
            first += chunk.count
        }
        return ends
    }

    private static func churnReason(_ row: SQLRow, _ column: Int) throws(StoreError) -> ChurnReason? {
        guard let text = try row.optionalText(column) else { return nil }
        guard let reason = ChurnReason(rawValue: text) else {
            throw StoreError(.corruptValue, "analytics_periods.churn_reason: unknown value")
        }
        return reason
    }
}
