import AppStoreModels

/// Analytics rebuilds (migration 0020): asked for by a change of the commission terms, run by
/// an `analytics_rebuild` job, a batch of customers per transaction.
extension SQLStoreTransaction {
    private static let rebuildColumns = """
        r.id, r.app_id, r.job_id, r.settings_version, r.state, r.after_customer_id, r.customers_done,
        r.customers_total, r.contributions_changed, r.rows_repaired, r.superseded_by, r.requested_at, r.started_at,
        r.finished_at, j.attempts, j.failed_at, j.last_error
        """

    func requestAnalyticsRebuild(appId: String, settingsVersion: Int64, at: Timestamp) throws
        -> AnalyticsRebuildRecord
    {
        // The unfinished one is superseded first (the unique index allows one per app), and its
        // job finished: the worker running it finds its lease gone at its next batch and stops.
        // The job row before the rebuild row, the order a batch takes them in (PostgreSQL would
        // otherwise deadlock the two); a rebuild that completed meanwhile stays completed.
        let unfinished = try rows(
            "SELECT id, job_id FROM analytics_rebuilds WHERE app_id = $1 AND state IN ('queued', 'running') ORDER BY id",
            .text(appId)
        ).map { row throws(StoreError) in (id: try row.integer(0), jobId: try row.optionalInteger(1)) }
        var superseded: [Int64] = []
        for old in unfinished {
            if let jobId = old.jobId {
                _ = try execute(
                    """
                    UPDATE jobs SET completed_at = $2, lease_owner = NULL, lease_expires_at = NULL
                    WHERE id = $1 AND completed_at IS NULL AND failed_at IS NULL
                    """, .integer(jobId), SQLValue(at))
            }
            if try execute(
                """
                UPDATE analytics_rebuilds SET state = 'superseded', finished_at = $2
                WHERE id = $1 AND state IN ('queued', 'running')
                """, .integer(old.id), SQLValue(at)) == 1
            {
                superseded.append(old.id)
            }
        }
        guard
            let id = try insertReturningId(
                """
                INSERT INTO analytics_rebuilds (app_id, settings_version, state, requested_at)
                VALUES ($1, $2, 'queued', $3) RETURNING id
                """, [.text(appId), .integer(settingsVersion), SQLValue(at)])
        else { throw StoreError(.database, "analytics rebuild insert returned no row") }
        for old in superseded {
            _ = try execute(
                "UPDATE analytics_rebuilds SET superseded_by = $2 WHERE id = $1", .integer(old), .integer(id))
        }
        guard
            let jobId = try enqueueJob(
                appId: appId, kind: AnalyticsRebuildRecord.jobKind,
                payload: Self.jsonText(AnalyticsRebuildJobPayload(appId: appId, rebuildId: id)), runAt: at,
                dedupeKey: AnalyticsRebuildRecord.jobDedupeKey, at: at)
        else {
            throw StoreError(.duplicate, "an unfinished analytics rebuild job of the app has no unfinished rebuild")
        }
        _ = try execute("UPDATE analytics_rebuilds SET job_id = $2 WHERE id = $1", .integer(id), .integer(jobId))
        guard let record = try analyticsRebuild(appId: appId, id: id) else {
            throw StoreError(.database, "analytics rebuild \(id) vanished")
        }
        return record
    }

    func analyticsRebuild(appId: String, id: Int64?) throws -> AnalyticsRebuildRecord? {
        let found: SQLRow?
        if let id {
            found = try row(
                """
                SELECT \(Self.rebuildColumns)
                FROM analytics_rebuilds r LEFT JOIN jobs j ON j.id = r.job_id
                WHERE r.app_id = $1 AND r.id = $2
                """, .text(appId), .integer(id))
        } else {
            found = try row(
                """
                SELECT \(Self.rebuildColumns)
                FROM analytics_rebuilds r LEFT JOIN jobs j ON j.id = r.job_id
                WHERE r.app_id = $1 ORDER BY r.id DESC LIMIT 1
                """, .text(appId))
        }
        return try found.map { row throws(StoreError) in try Self.rebuild(row) }
    }

    func analyticsRebuilds(appId: String, limit: Int) throws -> [AnalyticsRebuildRecord] {
        try rows(
            """
            SELECT \(Self.rebuildColumns)
            FROM analytics_rebuilds r LEFT JOIN jobs j ON j.id = r.job_id
            WHERE r.app_id = $1 ORDER BY r.id DESC LIMIT $2
            """, .text(appId), SQLValue(min(max(limit, 0), 100))
        ).map { row throws(StoreError) in try Self.rebuild(row) }
    }

    private static func rebuild(_ row: SQLRow) throws(StoreError) -> AnalyticsRebuildRecord {
        guard var status = AnalyticsRebuildStatus(rawValue: try row.text(4)), status != .failed else {
            throw StoreError(.corruptValue, "analytics_rebuilds.state: unknown value")
        }
        // Failed is the job's word: it was given up on while the rebuild was unfinished.
        if status == .queued || status == .running, try row.optionalInteger(15) != nil { status = .failed }
        return AnalyticsRebuildRecord(
            id: try row.integer(0), appId: try row.text(1), jobId: try row.optionalInteger(2),
            settingsVersion: try row.integer(3), status: status, afterCustomerId: try row.integer(5),
            customersDone: try row.integer(6), customersTotal: try row.integer(7),
            contributionsChanged: try row.integer(8), rowsRepaired: try row.integer(9),
            supersededBy: try row.optionalInteger(10), requestedAt: try row.timestamp(11),
            startedAt: try row.optionalTimestamp(12), finishedAt: try row.optionalTimestamp(13),
            attempts: Int(try row.optionalInteger(14) ?? 0), lastError: try row.optionalText(16))
    }

    func renewJobLease(id: Int64, owner: String, until: Timestamp) throws -> Bool {
        try execute(
            """
            UPDATE jobs SET lease_expires_at = $3
            WHERE id = $1 AND lease_owner = $2 AND completed_at IS NULL AND failed_at IS NULL
            """, .integer(id), .text(owner), SQLValue(until)) == 1
    }

    func startAnalyticsRebuildRun(id: Int64, at: Timestamp) throws -> AnalyticsRebuildRecord? {
        let changed = try execute(
            """
            UPDATE analytics_rebuilds SET state = 'running', started_at = COALESCE(started_at, $2),
                customers_total = customers_done + (
                    SELECT COUNT(*) FROM customers
                    WHERE customers.app_id = analytics_rebuilds.app_id
                      AND customers.id > analytics_rebuilds.after_customer_id)
            WHERE id = $1 AND state IN ('queued', 'running')
            """, .integer(id), SQLValue(at))
        guard changed == 1, let appId = try row("SELECT app_id FROM analytics_rebuilds WHERE id = $1", .integer(id))
        else { return nil }
        return try analyticsRebuild(appId: try appId.text(0), id: id)
    }

    func advanceAnalyticsRebuild(id: Int64, afterCustomerId: Int64, customers: Int, changed: Int) throws {
        // A customer created after the run started is past the total's count: the total grows
        // with the done count so that it never reads less than it.
        let greatest: String
        switch dialect {
        case .postgres: greatest = "GREATEST"
        case .sqlite: greatest = "MAX"
        }
        _ = try execute(
            """
            UPDATE analytics_rebuilds SET after_customer_id = $2, customers_done = customers_done + $3,
                contributions_changed = contributions_changed + $4,
                customers_total = \(greatest)(customers_total, customers_done + $3)
            WHERE id = $1 AND state = 'running'
            """, .integer(id), .integer(afterCustomerId), SQLValue(customers), SQLValue(changed))
    }

    func completeAnalyticsRebuild(id: Int64, rowsRepaired: Int, at: Timestamp) throws {
        _ = try execute(
            """
            UPDATE analytics_rebuilds SET state = 'completed', rows_repaired = $2, finished_at = $3
            WHERE id = $1 AND state = 'running'
            """, .integer(id), SQLValue(rowsRepaired), SQLValue(at))
    }

    func customerIds(appId: String, after: Int64, limit: Int) throws -> [Int64] {
        try rows(Self.customerIdsAfter, .text(appId), .integer(after), SQLValue(limit)).map {
            row throws(StoreError) in try row.integer(0)
        }
    }

    /// A page of the app's customers (`$1`) after id `$2`, `$3` of them: a walk of
    /// `customers_app` (migration 0034) from `$2`.
    static let customerIdsAfter = "SELECT id FROM customers WHERE app_id = $1 AND id > $2 ORDER BY id LIMIT $3"
}
