extension Migration {
    /// A webhook queue whose deliveries are all done leaves the due range: its `next_attempt_at`
    /// is NULL until an event gives it a pending delivery again. Queues were never removed, so
    /// every round's search for due endpoints walked every queue that ever existed (one per
    /// customer and endpoint) and listed every pending delivery: 109 ms a round on SQLite with
    /// 100,000 customers, two endpoints and one of them dead, once a second. `webhook_queues_due`
    /// holds only the queues with work, in each endpoint's order of claim, so a round reads a
    /// few index entries per endpoint and a claim stops at its batch.
    ///
    /// SQLite cannot drop a NOT NULL constraint in place, so its table is rebuilt (its queues
    /// keep their leases and fencing generations); PostgreSQL drops the constraint.
    static let webhookQueueDrain = Migration(
        identifier: "0037_webhook_queue_drain",
        sqlite: """
            CREATE TABLE webhook_queues_new (
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
                next_attempt_at BIGINT,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                lease_generation BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (customer_id, endpoint_id)
            );
            INSERT INTO webhook_queues_new (customer_id, endpoint_id, next_attempt_at, lease_owner, lease_expires_at,
                                            lease_generation)
            SELECT q.customer_id, q.endpoint_id,
                   CASE WHEN \(drainedCondition) THEN NULL ELSE q.next_attempt_at END,
                   q.lease_owner, q.lease_expires_at, q.lease_generation
            FROM webhook_queues q;
            DROP TABLE webhook_queues;
            ALTER TABLE webhook_queues_new RENAME TO webhook_queues;
            \(dueIndex)
            """,
        postgres: """
            ALTER TABLE webhook_queues ALTER COLUMN next_attempt_at DROP NOT NULL;
            UPDATE webhook_queues q SET next_attempt_at = NULL WHERE \(drainedCondition);
            \(dueIndex)
            """)

    /// Queue `q` holds no pending delivery.
    private static let drainedCondition = """
        NOT EXISTS (
                       SELECT 1 FROM webhook_outbox o
                       WHERE o.endpoint_id = q.endpoint_id AND o.customer_id = q.customer_id
                         AND o.delivered_at IS NULL AND o.dead_lettered_at IS NULL)
        """

    private static let dueIndex = """
        CREATE INDEX webhook_queues_due ON webhook_queues (endpoint_id, next_attempt_at, customer_id)
                WHERE next_attempt_at IS NOT NULL;
        """
}
