extension Migration {
    /// The Google Play recovery workers' durable state (issue 15).
    ///
    /// `play_voided_cursors`: per app, the voided time (epoch ms) up to which
    /// `purchases.voidedpurchases.list` has been fully ingested (NULL before the first complete
    /// run), leased to one worker at a time (`lease_owner` until `lease_expires_at`), so two
    /// instances never move one cursor at once.
    ///
    /// `play_subscription_watch`: per app and subscription purchase token, what the re-read
    /// worker needs without decoding facts: the state and latest line-item expiry of the token's
    /// newest read (`last_read_at`, the read instant; a later read replaces them, an older one
    /// arriving late does not), when the worker last re-read it, and the re-read's lease.
    /// Written by the commit path with the snapshot, in the same transaction. Tokens read before
    /// this migration join the watch at their next read.
    static let playRecovery = Migration(
        identifier: "0017_play_recovery",
        sqlite: sql,
        postgres: sql)

    private static let sql = """
        CREATE TABLE play_voided_cursors (
            app_id TEXT PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
            cursor_at BIGINT,
            lease_owner TEXT,
            lease_expires_at BIGINT,
            last_run_at BIGINT,
            last_error TEXT,
            updated_at BIGINT NOT NULL
        );
        CREATE TABLE play_subscription_watch (
            app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
            purchase_token TEXT NOT NULL,
            state TEXT NOT NULL,
            expires_at BIGINT,
            last_read_at BIGINT NOT NULL,
            last_reread_at BIGINT,
            lease_owner TEXT,
            lease_expires_at BIGINT,
            PRIMARY KEY (app_id, purchase_token)
        );
        CREATE INDEX play_subscription_watch_expires ON play_subscription_watch (app_id, expires_at);
        """
}
