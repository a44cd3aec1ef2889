extension Migration {
    /// The pending deliveries that hold a lease, by its expiry: what the claim's sweep of
    /// expired last attempts reads (`expiredLeaseSweep`). It walked every pending row of every
    /// endpoint at each claim, in the write transaction, so one dead endpoint's backlog slowed
    /// every endpoint's deliveries. A row enters the index when a claim leases it and leaves when
    /// it is delivered or dead-lettered: the delivery path's writes, never ingestion's.
    static let webhookLeaseSweep = Migration(
        identifier: "0035_webhook_lease_sweep",
        sql: """
            CREATE INDEX webhook_outbox_lease ON webhook_outbox (lease_expires_at)
                WHERE delivered_at IS NULL AND dead_lettered_at IS NULL AND lease_expires_at IS NOT NULL;
            """)
}
