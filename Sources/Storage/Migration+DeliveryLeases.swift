extension Migration {
    /// Webhook deliveries leased per queue (one customer's deliveries to one endpoint) instead of
    /// per row: `webhook_queues` holds each queue's lease (owner, expiry and a generation that
    /// every claim increments: the fencing token a worker's records must match) and when its head
    /// is due again after a failure. Outbox rows get their customer, so a queue's rows are one
    /// index range in event order. Existing pending rows get a queue each, due when their head was.
    static let deliveryLeases = Migration(
        identifier: "0006_delivery_leases",
        sqlite: """
            ALTER TABLE webhook_outbox ADD COLUMN customer_id BIGINT REFERENCES customers (id) ON DELETE CASCADE;
            UPDATE webhook_outbox
            SET customer_id = (SELECT e.customer_id FROM lifecycle_events e WHERE e.id = webhook_outbox.event_row_id);
            CREATE INDEX webhook_outbox_queue ON webhook_outbox (endpoint_id, customer_id, event_row_id)
                WHERE delivered_at IS NULL AND dead_lettered_at IS NULL;
            CREATE TABLE webhook_queues (
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
                next_attempt_at BIGINT NOT NULL,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                lease_generation BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (customer_id, endpoint_id)
            );
            INSERT INTO webhook_queues (customer_id, endpoint_id, next_attempt_at)
            SELECT o.customer_id, o.endpoint_id, o.next_attempt_at FROM webhook_outbox o
            WHERE o.delivered_at IS NULL AND o.dead_lettered_at IS NULL
              AND o.event_row_id = (
                  SELECT MIN(p.event_row_id) FROM webhook_outbox p
                  WHERE p.customer_id = o.customer_id AND p.endpoint_id = o.endpoint_id
                    AND p.delivered_at IS NULL AND p.dead_lettered_at IS NULL);
            UPDATE webhook_outbox SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner IS NOT NULL;
            """,
        postgres: """
            ALTER TABLE webhook_outbox ADD COLUMN customer_id BIGINT REFERENCES customers (id) ON DELETE CASCADE;
            UPDATE webhook_outbox o SET customer_id = e.customer_id FROM lifecycle_events e WHERE e.id = o.event_row_id;
            CREATE INDEX webhook_outbox_queue ON webhook_outbox (endpoint_id, customer_id, event_row_id)
                WHERE delivered_at IS NULL AND dead_lettered_at IS NULL;
            CREATE TABLE webhook_queues (
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
                next_attempt_at BIGINT NOT NULL,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                lease_generation BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (customer_id, endpoint_id)
            );
            INSERT INTO webhook_queues (customer_id, endpoint_id, next_attempt_at)
            SELECT o.customer_id, o.endpoint_id, o.next_attempt_at FROM webhook_outbox o
            WHERE o.delivered_at IS NULL AND o.dead_lettered_at IS NULL
              AND o.event_row_id = (
                  SELECT MIN(p.event_row_id) FROM webhook_outbox p
                  WHERE p.customer_id = o.customer_id AND p.endpoint_id = o.endpoint_id
                    AND p.delivered_at IS NULL AND p.dead_lettered_at IS NULL);
            UPDATE webhook_outbox SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner IS NOT NULL;
            """)
}
