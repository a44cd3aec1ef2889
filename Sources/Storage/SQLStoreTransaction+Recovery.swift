import AppStoreModels

/// The recovery workers' state: history replay cursors and the subscription watch of status
/// polling (migration 0009).
extension SQLStoreTransaction {
    // MARK: History cursors

    func leaseHistoryCursor(
        appId: String, environment: AppStoreEnvironment, owner: String, now: Timestamp, leaseMilliseconds: Int64
    ) throws -> HistoryCursor? {
        _ = try execute(
            """
            INSERT INTO notification_history_cursors (app_id, environment, updated_at) VALUES ($1, $2, $3)
            ON CONFLICT (app_id, environment) DO NOTHING
            """, .text(appId), .text(environment.rawValue), SQLValue(now))
        // One statement decides: on PostgreSQL the row lock makes a second claimer re-check the
        // lease on the first one's committed version, so only one of them gets it.
        let taken = try rows(
            """
            UPDATE notification_history_cursors
            SET lease_owner = $3, lease_expires_at = $4, last_run_at = $5, updated_at = $5
            WHERE app_id = $1 AND environment = $2
              AND (lease_owner IS NULL OR lease_owner = $3 OR lease_expires_at IS NULL OR lease_expires_at <= $5)
            RETURNING app_id
            """, .text(appId), .text(environment.rawValue), .text(owner),
            SQLValue(now.adding(milliseconds: leaseMilliseconds)), SQLValue(now))
        guard !taken.isEmpty else { return nil }
        return try historyCursor(appId: appId, environment: environment)
    }

    func advanceHistoryCursor(
        appId: String, environment: AppStoreEnvironment, owner: String, to cursor: Timestamp, now: Timestamp
    ) throws -> Bool {
        try execute(
            """
            UPDATE notification_history_cursors
            SET cursor_at = CASE WHEN cursor_at IS NULL OR cursor_at < $4 THEN $4 ELSE cursor_at END,
                last_error = NULL, updated_at = $5
            WHERE app_id = $1 AND environment = $2 AND lease_owner = $3 AND lease_expires_at > $5
            """, .text(appId), .text(environment.rawValue), .text(owner), SQLValue(cursor), SQLValue(now)) == 1
    }

    func releaseHistoryCursor(
        appId: String, environment: AppStoreEnvironment, owner: String, error: String?, now: Timestamp
    ) throws -> Bool {
        try execute(
            """
            UPDATE notification_history_cursors
            SET lease_owner = NULL, lease_expires_at = NULL, last_error = $4, updated_at = $5
            WHERE app_id = $1 AND environment = $2 AND lease_owner = $3
            """, .text(appId), .text(environment.rawValue), .text(owner), SQLValue(error), SQLValue(now)) == 1
    }

    func historyCursor(appId: String, environment: AppStoreEnvironment) throws -> HistoryCursor? {
        try historyCursors(where: "WHERE app_id = $1 AND environment = $2", .text(appId), .text(environment.rawValue))
            .first
    }

    func historyCursors() throws -> [HistoryCursor] {
        try historyCursors(where: "")
    }

    private func historyCursors(where filter: String, _ arguments: SQLValue...) throws -> [HistoryCursor] {
        let sql = """
            SELECT app_id, environment, cursor_at, lease_owner, lease_expires_at, last_run_at, last_error, updated_at
            FROM notification_history_cursors \(filter)
            ORDER BY app_id, environment
            """
        let cursors = try connection.query(sql, arguments).map { row throws(StoreError) -> HistoryCursor? in
            guard let environment = AppStoreEnvironment(rawValue: try row.text(1)) else { return nil }
            return HistoryCursor(
                appId: try row.text(0), environment: environment, cursorAt: try row.optionalTimestamp(2),
                leaseOwner: try row.optionalText(3), leaseExpiresAt: try row.optionalTimestamp(4),
                lastRunAt: try row.optionalTimestamp(5), lastError: try row.optionalText(6),
                updatedAt: try row.timestamp(7))
        }
        return cursors.compactMap { $0 }
    }

    // MARK: Subscription watch

    func watchSubscription(_ update: SubscriptionWatchUpdate) throws {
        // Each column keeps the newest knowledge: the latest expiry, the billing flag of the
        // newest signed renewal info, the latest arrival. Arrival order does not matter.
        _ = try execute(
            """
            INSERT INTO subscription_watch (app_id, environment, original_transaction_id, expires_at, billing_retry,
                                            renewal_signed_at, last_fact_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (app_id, environment, original_transaction_id) DO UPDATE SET
                expires_at = CASE
                    WHEN excluded.expires_at IS NOT NULL
                     AND (subscription_watch.expires_at IS NULL OR excluded.expires_at > subscription_watch.expires_at)
                    THEN excluded.expires_at ELSE subscription_watch.expires_at END,
                billing_retry = CASE
                    WHEN excluded.renewal_signed_at IS NOT NULL
                     AND (subscription_watch.renewal_signed_at IS NULL
                          OR excluded.renewal_signed_at >= subscription_watch.renewal_signed_at)
                    THEN excluded.billing_retry ELSE subscription_watch.billing_retry END,
                renewal_signed_at = CASE
                    WHEN excluded.renewal_signed_at IS NOT NULL
                     AND (subscription_watch.renewal_signed_at IS NULL
                          OR excluded.renewal_signed_at > subscription_watch.renewal_signed_at)
                    THEN excluded.renewal_signed_at ELSE subscription_watch.renewal_signed_at END,
                last_fact_at = CASE WHEN excluded.last_fact_at > subscription_watch.last_fact_at
                    THEN excluded.last_fact_at ELSE subscription_watch.last_fact_at END
            """, .text(update.appId), .text(update.environment.rawValue), .text(update.originalTransactionId),
            SQLValue(update.expiresAt), SQLValue(update.billingRetry ?? false), SQLValue(update.renewalSignedAt),
            SQLValue(update.factAt))
    }

    func claimSubscriptionPolls(
        appId: String, environment: AppStoreEnvironment, rules: SubscriptionPollRules, owner: String, now: Timestamp,
        leaseMilliseconds: Int64, limit: Int
    ) throws -> [SubscriptionPoll] {
        try rows(
            dialect == .postgres ? Self.subscriptionPollClaimPostgres : Self.subscriptionPollClaimSQLite,
            .text(owner), SQLValue(now.adding(milliseconds: leaseMilliseconds)), .text(appId),
            .text(environment.rawValue), SQLValue(now),
            SQLValue(now.adding(milliseconds: -rules.expiryDelayMilliseconds)),
            SQLValue(now.adding(milliseconds: -rules.billingRetryIntervalMilliseconds)),
            SQLValue(now.adding(milliseconds: -rules.staleAfterMilliseconds)), SQLValue(limit)
        ).map { row throws(StoreError) in try Self.subscriptionPoll(row, environment: environment) }
            .sorted { $0.originalTransactionId < $1.originalTransactionId }
    }

    static let subscriptionPollClaimSQLite = subscriptionPollClaim(lock: "")
    static let subscriptionPollClaimPostgres = subscriptionPollClaim(lock: "FOR UPDATE SKIP LOCKED")

    /// The claim: leases (`$1` owner, `$2` until) the first `$9` due subscriptions of app `$3`
    /// in environment `$4` at `$5`, in expiry order (`subscription_watch_pollable` gives that
    /// order within the app's subscriptions that can be due, so the walk stops at the batch).
    /// `$6`: the expiry before which one is overdue; `$7`: the last billing-retry poll before
    /// which one is due again; `$8`: the last word before which an active one is stale.
    private static func subscriptionPollClaim(lock: String) -> String {
        // Due: in billing retry and nothing heard for an interval; past its expiry (plus the
        // delay) with no fact and no poll since the expiry; or active with nothing heard for
        // the stale time. The latest of the last fact and the last poll is "heard".
        // The first condition is the index's (`subscription_watch_pollable`), word for word: every
        // branch below implies it, and stating it lets the engines walk that index.
        let due = """
            app_id = $3 AND environment = $4
              AND (billing_retry = 1 OR (last_fact_at < expires_at AND (last_polled_at IS NULL OR last_polled_at < expires_at)))
              AND (lease_expires_at IS NULL OR lease_expires_at <= $5)
              AND (
                (billing_retry = 1
                 AND (CASE WHEN last_polled_at IS NULL OR last_fact_at > last_polled_at
                      THEN last_fact_at ELSE last_polled_at END) <= $7)
                OR (expires_at IS NOT NULL AND expires_at <= $6 AND last_fact_at < expires_at
                    AND (last_polled_at IS NULL OR last_polled_at < expires_at))
                OR (expires_at IS NOT NULL AND expires_at > $5
                    AND (CASE WHEN last_polled_at IS NULL OR last_fact_at > last_polled_at
                         THEN last_fact_at ELSE last_polled_at END) <= $8))
            """
        return """
            UPDATE subscription_watch SET lease_owner = $1, lease_expires_at = $2
            WHERE (app_id, environment, original_transaction_id) IN (
                SELECT app_id, environment, original_transaction_id FROM subscription_watch
                WHERE \(due)
                ORDER BY expires_at, original_transaction_id
                LIMIT $9
                \(lock))
            RETURNING app_id, environment, original_transaction_id, expires_at, billing_retry, last_fact_at,
                      last_polled_at
            """
    }

    func finishSubscriptionPoll(
        appId: String, environment: AppStoreEnvironment, originalTransactionId: String, owner: String,
        polledAt: Timestamp?, retryAt: Timestamp?
    ) throws -> Bool {
        if let polledAt {
            return try execute(
                """
                UPDATE subscription_watch SET last_polled_at = $5, lease_owner = NULL, lease_expires_at = NULL
                WHERE app_id = $1 AND environment = $2 AND original_transaction_id = $3 AND lease_owner = $4
                """, .text(appId), .text(environment.rawValue), .text(originalTransactionId), .text(owner),
                SQLValue(polledAt)) == 1
        }
        // A failed poll keeps its lease until `retryAt`: the lease is the backoff.
        return try execute(
            """
            UPDATE subscription_watch SET lease_expires_at = $5
            WHERE app_id = $1 AND environment = $2 AND original_transaction_id = $3 AND lease_owner = $4
            """, .text(appId), .text(environment.rawValue), .text(originalTransactionId), .text(owner),
            SQLValue(retryAt)) == 1
    }

    func subscriptionWatch(appId: String, environment: AppStoreEnvironment, originalTransactionId: String) throws
        -> SubscriptionPoll?
    {
        try row(
            """
            SELECT app_id, environment, original_transaction_id, expires_at, billing_retry, last_fact_at, last_polled_at
            FROM subscription_watch WHERE app_id = $1 AND environment = $2 AND original_transaction_id = $3
            """, .text(appId), .text(environment.rawValue), .text(originalTransactionId)
        ).map { row throws(StoreError) in try Self.subscriptionPoll(row, environment: environment) }
    }

    /// A watched subscription read as (app, environment, original transaction, expiry, billing
    /// retry, last fact, last poll), the columns the claim returns and `subscriptionWatch` reads.
    private static func subscriptionPoll(_ row: SQLRow, environment: AppStoreEnvironment) throws(StoreError)
        -> SubscriptionPoll
    {
        SubscriptionPoll(
            appId: try row.text(0), environment: environment, originalTransactionId: try row.text(2),
            expiresAt: try row.optionalTimestamp(3), billingRetry: try row.integer(4) != 0,
            lastFactAt: try row.timestamp(5), lastPolledAt: try row.optionalTimestamp(6))
    }
}
