extension Migration {
    /// The recovery workers' durable state.
    ///
    /// `notification_history_cursors`: per app and environment, the instant up to which Get
    /// Notification History has been fully ingested (`cursor_at`, epoch ms; NULL before the
    /// first complete run), leased to one worker at a time (`lease_owner` until
    /// `lease_expires_at`), so two instances never move one cursor at once.
    ///
    /// `subscription_watch`: per app, environment and original transaction of an
    /// auto-renewable subscription, what status polling needs without decoding facts: the
    /// latest known `expires_at`, whether the latest renewal info (by `renewal_signed_at`) says
    /// billing retry, when the last fact arrived (`last_fact_at`), when it was last polled, and
    /// the poll's lease. Written by the commit path with the facts, in the same transaction.
    static let recovery = Migration(
        identifier: "0009_recovery",
        sqlite: """
            CREATE TABLE notification_history_cursors (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                cursor_at BIGINT,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                last_run_at BIGINT,
                last_error TEXT,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, environment)
            );
            CREATE TABLE subscription_watch (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                expires_at BIGINT,
                billing_retry INTEGER NOT NULL DEFAULT 0,
                renewal_signed_at BIGINT,
                last_fact_at BIGINT NOT NULL,
                last_polled_at BIGINT,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                PRIMARY KEY (app_id, environment, original_transaction_id)
            );
            CREATE INDEX subscription_watch_expires ON subscription_watch (expires_at);
            """,
        postgres: """
            CREATE TABLE notification_history_cursors (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                cursor_at BIGINT,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                last_run_at BIGINT,
                last_error TEXT,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, environment)
            );
            CREATE TABLE subscription_watch (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                expires_at BIGINT,
                billing_retry INTEGER NOT NULL DEFAULT 0,
                renewal_signed_at BIGINT,
                last_fact_at BIGINT NOT NULL,
                last_polled_at BIGINT,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                PRIMARY KEY (app_id, environment, original_transaction_id)
            );
            CREATE INDEX subscription_watch_expires ON subscription_watch (expires_at);
            """)
}
