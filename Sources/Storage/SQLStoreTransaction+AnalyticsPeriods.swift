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
        let read = try rows(
            """
            SELECT \(Self.periodColumns) FROM analytics_periods
            WHERE customer_id = $1 AND environment = $2 ORDER BY transaction_id
            """, .integer(customerId), .text(environment.rawValue)
        ).map { row throws(StoreError) in try Self.period(row) }
        // In Swift's order: PostgreSQL's collation may order ids with dots and dashes apart.
        // Indices are sorted, not the periods (each holds six strings).
        let stored = Self.inTransactionOrder(read)
        let sorted = Self.inTransactionOrder(periods)
        guard stored != sorted else { return false }
        // Only the periods that changed are rewritten: a long history adds one period at a time,
        // and rewriting all of them made each new fact cost the whole history.
        let (stale, fresh) = Self.changes(from: stored, to: sorted)
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
        guard !fresh.isEmpty else { return !stale.isEmpty }
        _ = try insertRows(
            into: """
                INSERT INTO analytics_periods (customer_id, environment, app_id, \(Self.periodColumns))
                """,
            onConflict: "", width: 18,
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

    static func inTransactionOrder(_ periods: [AnalyticsPeriod]) -> [AnalyticsPeriod] {
        if zip(periods, periods.dropFirst()).allSatisfy({ $0.transactionId < $1.transactionId }) { return periods }
        return periods.indices.sorted { periods[$0].transactionId < periods[$1].transactionId }.map { periods[$0] }
    }

    /// The ids of the `stored` periods to delete and the periods to insert to make them
    /// `wanted`, both in transaction order: a walk over the two, which are in that order.
    /// With ids repeated (never stored, a primary key forbids it) the first stored and the last
    /// wanted of an id are the ones compared, as lookups by id would.
    static func changes(from stored: [AnalyticsPeriod], to wanted: [AnalyticsPeriod]) -> (
        stale: [String], fresh: [AnalyticsPeriod]
    ) {
        let unique = { (periods: [AnalyticsPeriod]) in
            zip(periods, periods.dropFirst()).allSatisfy { $0.transactionId != $1.transactionId }
        }
        guard unique(stored), unique(wanted) else {
            let wantedById = Dictionary(wanted.map { ($0.transactionId, $0) }, uniquingKeysWith: { _, last in last })
            let kept = Dictionary(stored.map { ($0.transactionId, $0) }, uniquingKeysWith: { first, _ in first })
            return (
                stored.filter { wantedById[$0.transactionId] != $0 }.map(\.transactionId),
                wanted.filter { kept[$0.transactionId] != $0 }
            )
        }
        var stale: [String] = []
        var fresh: [AnalyticsPeriod] = []
        var old = 0
        var new = 0
        while old < stored.count || new < wanted.count {
            if new == wanted.count || (old < stored.count && stored[old].transactionId < wanted[new].transactionId) {
                stale.append(stored[old].transactionId)
                old += 1
            } else if old == stored.count || wanted[new].transactionId < stored[old].transactionId {
                fresh.append(wanted[new])
                new += 1
            } else {
                if stored[old] != wanted[new] {
                    stale.append(stored[old].transactionId)
                    fresh.append(wanted[new])
                }
                old += 1
                new += 1
            }
        }
        return (stale, fresh)
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
