import AppStoreModels

/// The job queue for workers, and the audit log.
extension SQLStoreTransaction {
    func enqueueJob(
        appId: String?, kind: String, payload: String, runAt: Timestamp, dedupeKey: String?, at: Timestamp
    ) throws -> Int64? {
        // Each conflict target names the partial unique index (0010) that covers its rows: a
        // key is taken only while a job holding it is unfinished.
        let conflict =
            appId == nil
            ? "ON CONFLICT (dedupe_key) WHERE app_id IS NULL AND completed_at IS NULL AND failed_at IS NULL DO NOTHING"
            : "ON CONFLICT (app_id, dedupe_key) WHERE app_id IS NOT NULL AND completed_at IS NULL AND failed_at IS NULL "
                + "DO NOTHING"
        return try insertReturningId(
            """
            INSERT INTO jobs (app_id, kind, payload, dedupe_key, run_at, attempts, created_at)
            VALUES ($1, $2, $3, $4, $5, 0, $6)
            \(conflict)
            RETURNING id
            """, [SQLValue(appId), .text(kind), .text(payload), SQLValue(dedupeKey), SQLValue(runAt), SQLValue(at)])
    }

    func claimJobs(kind: String, owner: String, now: Timestamp, leaseMilliseconds: Int64, limit: Int) throws
        -> [JobRecord]
    {
        let sql: String
        switch dialect {
        case .postgres:
            sql = """
                UPDATE jobs SET lease_owner = $1, lease_expires_at = $2, attempts = attempts + 1
                WHERE id IN (
                    SELECT id FROM jobs
                    WHERE kind = $3 AND completed_at IS NULL AND failed_at IS NULL AND run_at <= $4
                      AND (lease_expires_at IS NULL OR lease_expires_at <= $4)
                    ORDER BY run_at, id
                    LIMIT $5
                    FOR UPDATE SKIP LOCKED)
                RETURNING id
                """
        case .sqlite:
            sql = """
                UPDATE jobs SET lease_owner = $1, lease_expires_at = $2, attempts = attempts + 1
                WHERE id IN (
                    SELECT id FROM jobs
                    WHERE kind = $3 AND completed_at IS NULL AND failed_at IS NULL AND run_at <= $4
                      AND (lease_expires_at IS NULL OR lease_expires_at <= $4)
                    ORDER BY run_at, id
                    LIMIT $5)
                RETURNING id
                """
        }
        let ids = try rows(
            sql, .text(owner), SQLValue(now.adding(milliseconds: leaseMilliseconds)), .text(kind), SQLValue(now),
            SQLValue(limit)
        ).map { row throws(StoreError) in try row.integer(0) }.sorted()
        return try ids.compactMap { id in try job(id: id) }
    }

    func job(id: Int64) throws -> JobRecord? {
        try row(
            """
            SELECT id, kind, payload, run_at, attempts, lease_owner, lease_expires_at, last_error, completed_at,
                   failed_at, app_id
            FROM jobs WHERE id = $1
            """, .integer(id)
        ).map { row throws(StoreError) in
            JobRecord(
                id: try row.integer(0), appId: try row.optionalText(10), kind: try row.text(1),
                payload: try row.text(2), runAt: try row.timestamp(3), attempts: Int(try row.integer(4)),
                leaseOwner: try row.optionalText(5), leaseExpiresAt: try row.optionalTimestamp(6),
                lastError: try row.optionalText(7), completedAt: try row.optionalTimestamp(8),
                failedAt: try row.optionalTimestamp(9))
        }
    }

    func completeJob(id: Int64, owner: String, at: Timestamp) throws -> Bool {
        try execute(
            """
            UPDATE jobs SET completed_at = $3, lease_owner = NULL, lease_expires_at = NULL
            WHERE id = $1 AND lease_owner = $2 AND completed_at IS NULL AND failed_at IS NULL
            """, .integer(id), .text(owner), SQLValue(at)) == 1
    }

    func failJob(id: Int64, owner: String, error: String, retryAt: Timestamp?, at: Timestamp) throws -> Bool {
        if let retryAt {
            return try execute(
                """
                UPDATE jobs SET run_at = $4, last_error = $3, lease_owner = NULL, lease_expires_at = NULL
                WHERE id = $1 AND lease_owner = $2 AND completed_at IS NULL AND failed_at IS NULL
                """, .integer(id), .text(owner), .text(error), SQLValue(retryAt)) == 1
        }
        return try execute(
            """
            UPDATE jobs SET failed_at = $4, last_error = $3, lease_owner = NULL, lease_expires_at = NULL
            WHERE id = $1 AND lease_owner = $2 AND completed_at IS NULL AND failed_at IS NULL
            """, .integer(id), .text(owner), .text(error), SQLValue(at)) == 1
    }

    @discardableResult
    func appendAudit(_ entry: NewAuditEntry) throws -> Int64 {
        guard
            let id = try insertReturningId(
                """
                INSERT INTO audit_log (at, actor, action, app_id, detail_json) VALUES ($1, $2, $3, $4, $5)
                RETURNING id
                """,
                [
                    SQLValue(entry.at), .text(entry.actor), .text(entry.action), SQLValue(entry.appId),
                    Self.json(entry.detail),
                ])
        else { throw StoreError(.database, "audit insert returned no row") }
        return id
    }

    func auditEntries(after: Int64?, limit: Int) throws -> [AuditEntry] {
        try rows(
            "SELECT id, at, actor, action, app_id, detail_json FROM audit_log WHERE id > $1 ORDER BY id LIMIT $2",
            .integer(after ?? 0), SQLValue(limit)
        ).map { row throws(StoreError) in
            AuditEntry(
                id: try row.integer(0), at: try row.timestamp(1), actor: try row.text(2), action: try row.text(3),
                appId: try row.optionalText(4),
                detail: try Self.decode(JSONValue.self, try row.text(5), column: "audit_log.detail_json"))
        }
    }
}
