extension Migration {
    /// Google Play's re-read claim walks only the tokens in a state it can claim
    /// (`PlayRereadStates.claimable`). `0034_ordered_walks` indexed every watched token in claim
    /// order, but expired purchases (and canceled pending ones) stay in the watch forever, their expiries
    /// in the past, at the front of that order: a claim with nothing due walked them all, in the
    /// write transaction (188 ms against 172 ms for the sort 0034 replaced, with most of an
    /// app's tokens expired; a reviewer's measure). The states are written out here as the
    /// claim writes them, in the same order, so that SQLite matches the claim's term to the
    /// index's condition.
    static let playWatchClaimable = Migration(
        identifier: "0039_play_watch_claimable",
        sql: """
            CREATE INDEX play_subscription_watch_claimable ON play_subscription_watch (
                app_id, (CASE WHEN expires_at IS NULL THEN 1 ELSE 0 END), expires_at, purchase_token)
                WHERE state IN ('SUBSCRIPTION_STATE_ACTIVE', 'SUBSCRIPTION_STATE_CANCELED',
                                'SUBSCRIPTION_STATE_IN_GRACE_PERIOD', 'SUBSCRIPTION_STATE_ON_HOLD',
                                'SUBSCRIPTION_STATE_PAUSED');
            DROP INDEX play_subscription_watch_due;
            """)
}
