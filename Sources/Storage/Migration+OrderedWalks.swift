extension Migration {
    /// Three reads that returned a page of one app's rows in an order no index gave, so SQLite
    /// (which never analyzes a Storekeeper store) read all of the app's rows and sorted them in a
    /// temporary B-tree for each page:
    /// - an analytics rebuild's batch of customers (`customerIds(appId:after:limit:)`), in the
    ///   write transaction: 13.4 ms a batch at 150,000 customers, which made a whole rebuild
    ///   quadratic (about 20 s of the writer);
    /// - Google Play's re-read claim (`claimPlayRereads`), in the write transaction, every round
    ///   while tokens are due (its order puts unknown expiries last: the index holds that
    ///   expression, written as the claim writes it, so that both engines match it);
    /// - `GET …/notifications` (`recentNotifications`), newest first: 10 ms a page at 10,000.
    /// Each index holds the equality and the order, so the walk stops at the page. Only a new
    /// customer or notification adds an entry (at the end of its app's range); the Play index
    /// replaces `play_subscription_watch_expires`, which nothing else reads.
    static let orderedWalks = Migration(
        identifier: "0034_ordered_walks",
        sql: """
            CREATE INDEX customers_app ON customers (app_id, id);
            CREATE INDEX play_subscription_watch_due ON play_subscription_watch (
                app_id, (CASE WHEN expires_at IS NULL THEN 1 ELSE 0 END), expires_at, purchase_token);
            DROP INDEX play_subscription_watch_expires;
            CREATE INDEX notifications_app ON notifications (app_id, id);
            """)
}
