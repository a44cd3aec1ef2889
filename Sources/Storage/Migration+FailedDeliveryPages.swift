extension Migration {
    /// The deliveries that failed and are not delivered, per endpoint in id order: what a page of
    /// `GET …/webhooks/deliveries/failed` and the dashboard's operations page read (`failedDeliveries`).
    /// Those pages walked the whole outbox in id order from the cursor, delivered rows included,
    /// which are kept forever: 25 ms a page with 600,000 rows, growing with an app's history and
    /// with every other app's. A row enters the index at its first failure and leaves when it is
    /// delivered: the delivery path's writes, never ingestion's.
    static let failedDeliveryPages = Migration(
        identifier: "0038_failed_delivery_pages",
        sql: """
            CREATE INDEX webhook_outbox_failed ON webhook_outbox (endpoint_id, id)
                WHERE delivered_at IS NULL AND (dead_lettered_at IS NOT NULL OR last_error IS NOT NULL);
            """)
}
