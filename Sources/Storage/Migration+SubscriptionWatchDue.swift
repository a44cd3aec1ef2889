extension Migration {
    /// The status-polling claim reads one app's environment in expiry order and stops at its
    /// batch (`claimSubscriptionPolls`). `subscription_watch_expires` (expiry alone, every app)
    /// served that only on PostgreSQL with statistics; SQLite, which never analyzes a Storekeeper
    /// store, took the primary key's app prefix and sorted every watched subscription of the app
    /// in a temporary B-tree, under the write lock: about 50 ms a claim at 150,000 of them, growing
    /// with the app. This index holds the claim's equality and its order, so both engines walk it
    /// in order and stop at the batch (0.2–2.7 ms there); it replaces the old one, which nothing
    /// else reads.
    static let subscriptionWatchDue = Migration(
        identifier: "0033_subscription_watch_due",
        sql: """
            CREATE INDEX subscription_watch_due
                ON subscription_watch (app_id, environment, expires_at, original_transaction_id);
            DROP INDEX subscription_watch_expires;
            """)
}
