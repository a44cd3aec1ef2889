import AppStoreModels

/// Counts for the dashboard's operations and overview pages: each one aggregate statement
/// over the rows every instance shares, so any instance shows the same figures.
extension SQLStoreTransaction {
    func apiKey(id: String) throws -> APIKeyRecord? {
        try row(
            """
            SELECT id, app_id, kind, key_hash, label, created_at, revoked_at
            FROM api_keys WHERE id = $1
            """, .text(id)
        ).map { row throws(StoreError) in
            guard let kind = APIKeyRecord.Kind(rawValue: try row.text(2)) else {
                throw StoreError(.corruptValue, "api_keys.kind is not a known kind")
            }
            return APIKeyRecord(
                id: try row.text(0), appId: try row.optionalText(1), kind: kind, hash: try row.text(3),
                label: try row.text(4), createdAt: try row.timestamp(5), revokedAt: try row.optionalTimestamp(6))
        }
    }

    func notificationIntake(appId: String, since: Timestamp) throws -> [NotificationIntakeCount] {
        try rows(Self.notificationIntakeSince, .text(appId), SQLValue(since)).map { row throws(StoreError) in
            NotificationIntakeCount(
                notificationType: try row.text(0), subtype: try row.optionalText(1), outcome: try row.optionalText(2),
                count: Int(try row.integer(3)), lastReceivedAt: try row.timestamp(4))
        }
    }

    /// App `$1`'s notifications received since `$2`, by type, subtype and outcome: the window
    /// read through `notifications_received` (migration 0040).
    static let notificationIntakeSince = """
        SELECT notification_type, subtype, outcome, COUNT(*), MAX(received_at) FROM notifications
        WHERE app_id = $1 AND received_at >= $2
        GROUP BY notification_type, subtype, outcome
        ORDER BY notification_type, subtype, outcome
        """

    func verificationFailures(appId: String, since: Timestamp) throws -> [VerificationFailureCount] {
        try rows(
            dialect == .postgres ? Self.verificationFailuresPostgres : Self.verificationFailuresSQLite, .text(appId),
            SQLValue(since)
        ).map { row throws(StoreError) in
            VerificationFailureCount(
                rule: try row.text(0), count: Int(try row.integer(1)), lastAt: try row.timestamp(2))
        }
    }

    /// App `$1`'s rejected notifications since `$2`, by the rule they broke, read through
    /// `audit_log_app_action` (migration 0040). The rule sits in the entry's JSON detail; each
    /// engine reads it with its own function.
    static let verificationFailuresSQLite = verificationFailures(rule: "json_extract(detail_json, '$.rule')")
    static let verificationFailuresPostgres = verificationFailures(rule: "(detail_json::jsonb ->> 'rule')")

    private static func verificationFailures(rule: String) -> String {
        """
        SELECT COALESCE(\(rule), 'unknown') AS rule, COUNT(*), MAX(at) FROM audit_log
        WHERE app_id = $1 AND action = 'notification.rejected' AND at >= $2
        GROUP BY 1 ORDER BY 1
        """
    }

    func deliverySummary(appId: String) throws -> DeliverySummary {
        let row = try row(
            """
            SELECT
              COUNT(*) FILTER (WHERE delivered_at IS NULL AND dead_lettered_at IS NULL),
              COUNT(*) FILTER (WHERE delivered_at IS NULL AND dead_lettered_at IS NULL AND last_error IS NOT NULL),
              COUNT(*) FILTER (WHERE delivered_at IS NULL AND dead_lettered_at IS NOT NULL),
              COUNT(*) FILTER (WHERE delivered_at IS NOT NULL)
            FROM webhook_outbox
            WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE app_id = $1)
            """, .text(appId))
        return DeliverySummary(
            pending: Int(try row?.integer(0) ?? 0), failing: Int(try row?.integer(1) ?? 0),
            deadLettered: Int(try row?.integer(2) ?? 0), delivered: Int(try row?.integer(3) ?? 0))
    }

    func jobQueues(appId: String, now: Timestamp) throws -> [JobQueueSummary] {
        try rows(
            """
            SELECT kind,
              COUNT(*) FILTER (WHERE completed_at IS NULL AND failed_at IS NULL),
              COUNT(*) FILTER (WHERE completed_at IS NULL AND failed_at IS NULL
                               AND lease_owner IS NOT NULL AND lease_expires_at > $2),
              COUNT(*) FILTER (WHERE failed_at IS NOT NULL),
              COUNT(*) FILTER (WHERE completed_at IS NOT NULL),
              MIN(CASE WHEN completed_at IS NULL AND failed_at IS NULL THEN run_at END)
            FROM jobs WHERE app_id = $1
            GROUP BY kind ORDER BY kind
            """, .text(appId), SQLValue(now)
        ).map { row throws(StoreError) in
            JobQueueSummary(
                kind: try row.text(0), queued: Int(try row.integer(1)), running: Int(try row.integer(2)),
                failed: Int(try row.integer(3)), completed: Int(try row.integer(4)),
                oldestDueAt: try row.optionalTimestamp(5))
        }
    }

    func subscriptionWatches(appId: String) throws -> [SubscriptionWatchSummary] {
        try rows(
            """
            SELECT environment, COUNT(*),
              COUNT(*) FILTER (WHERE billing_retry <> 0),
              COUNT(*) FILTER (WHERE last_polled_at IS NULL),
              MAX(last_polled_at)
            FROM subscription_watch WHERE app_id = $1
            GROUP BY environment ORDER BY environment
            """, .text(appId)
        ).map { row throws(StoreError) in
            guard let environment = AppStoreEnvironment(rawValue: try row.text(0)) else {
                throw StoreError(.corruptValue, "subscription_watch.environment is not an environment")
            }
            return SubscriptionWatchSummary(
                environment: environment, watched: Int(try row.integer(1)), inBillingRetry: Int(try row.integer(2)),
                neverPolled: Int(try row.integer(3)), lastPolledAt: try row.optionalTimestamp(4))
        }
    }

    func newCustomersByDay(appId: String, from: Timestamp, to: Timestamp) throws -> [DailyCount] {
        try dailyCounts(
            "SELECT first_seen_at / 86400000, COUNT(*) FROM customers WHERE app_id = $1 AND first_seen_at >= $2 "
                + "AND first_seen_at < $3 GROUP BY 1 ORDER BY 1", appId: appId, from: from, to: to)
    }

    func notificationsByDay(appId: String, environment: AppStoreEnvironment?, from: Timestamp, to: Timestamp) throws
        -> [DailyCount]
    {
        try rows(
            Self.notificationsByDayBetween, .text(appId), SQLValue(from), SQLValue(to), SQLValue(environment?.rawValue)
        ).map { row throws(StoreError) in DailyCount(day: try row.integer(0), count: Int(try row.integer(1))) }
    }

    /// App `$1`'s notifications received in [`$2`, `$3`), of environment `$4` when given, per
    /// day: the window read through `notifications_received` (migration 0040).
    static let notificationsByDayBetween = """
        SELECT received_at / 86400000, COUNT(*) FROM notifications
        WHERE app_id = $1 AND received_at >= $2 AND received_at < $3
          AND (CAST($4 AS TEXT) IS NULL OR environment = CAST($4 AS TEXT))
        GROUP BY 1 ORDER BY 1
        """

    private func dailyCounts(_ sql: String, appId: String, from: Timestamp, to: Timestamp) throws -> [DailyCount] {
        try rows(sql, .text(appId), SQLValue(from), SQLValue(to)).map { row throws(StoreError) in
            DailyCount(day: try row.integer(0), count: Int(try row.integer(1)))
        }
    }
}
