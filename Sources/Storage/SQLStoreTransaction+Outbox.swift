import AppStoreModels

/// The webhook outbox: rows committed with the events, delivered queue by queue (one customer's
/// rows to one endpoint, in event order) under a lease on the queue (`webhook_queues`).
extension SQLStoreTransaction {
    func enqueueDeliveries(of events: [StoredEvent], appId: String, at: Timestamp) throws -> Int {
        var added = 0
        var queues = Set<DeliveryQueueKey>()
        for event in events {
            // The endpoints given a row, as inserted: reading the enabled endpoints again for
            // the queues could see one disabled or enabled since (READ COMMITTED), and leave a
            // new row in a drained queue.
            let endpoints = try rows(
                """
                INSERT INTO webhook_outbox (event_row_id, endpoint_id, customer_id, attempts, next_attempt_at,
                                            created_at)
                SELECT $1, id, $4, 0, $2, $2 FROM webhook_endpoints WHERE app_id = $3 AND enabled = 1
                ON CONFLICT (event_row_id, endpoint_id) DO NOTHING
                RETURNING endpoint_id
                """, .integer(event.sequence), SQLValue(at), .text(appId), .integer(event.customerId)
            ).map { row throws(StoreError) in try row.text(0) }
            for endpointId in endpoints {
                queues.insert(DeliveryQueueKey(customerId: event.customerId, endpointId: endpointId))
            }
            added += endpoints.count
        }
        // A queue that exists keeps its schedule (an event behind a failed one waits for its
        // retry); a drained one is due again.
        for queue in queues.sorted() {
            try execute(Self.queueReopen, .integer(queue.customerId), .text(queue.endpointId), SQLValue(at))
        }
        return added
    }

    /// Queue (`$1` customer, `$2` endpoint), due at `$3` when new or drained (`next_attempt_at`
    /// NULL, migration 0037). The upsert locks a queue it finds, even when it changes nothing
    /// (PostgreSQL), so a drain cannot read the queue empty while a delivery enqueued beside
    /// this is uncommitted and then mark it drained after (see `drainIfEmpty`).
    static let queueReopen = """
        INSERT INTO webhook_queues (customer_id, endpoint_id, next_attempt_at) VALUES ($1, $2, $3)
        ON CONFLICT (customer_id, endpoint_id) DO UPDATE SET next_attempt_at = excluded.next_attempt_at
        WHERE webhook_queues.next_attempt_at IS NULL
        """

    /// The condition on queue `q` of being claimable at the parameter `now`: due, not leased, and
    /// holding a pending delivery; of the endpoint `endpoint` when given. A drained queue's
    /// `next_attempt_at` is NULL, so only queues with work are in the due range of
    /// `webhook_queues_due` (migration 0037); the pending delivery is then one probe of
    /// `webhook_outbox_queue` per queue. (An `IN` list of every pending delivery cost a claim of
    /// a dead endpoint with 100,000 of them 86 ms, in the write transaction.)
    static func claimableQueue(now: String, endpoint: String? = nil) -> String {
        let ofEndpoint = endpoint.map { " AND q.endpoint_id = \($0)" } ?? ""
        return """
            q.next_attempt_at <= \(now) AND (q.lease_expires_at IS NULL OR q.lease_expires_at <= \(now))\(ofEndpoint)
              AND EXISTS (
                  SELECT 1 FROM webhook_outbox o
                  WHERE o.endpoint_id = q.endpoint_id AND o.customer_id = q.customer_id
                    AND o.delivered_at IS NULL AND o.dead_lettered_at IS NULL)
            """
    }

    /// Deliveries whose worker died during their last allowed attempt (`$2` attempts) leave an
    /// expired lease (before `$1`): they are dead-lettered. `webhook_outbox_lease` (migration
    /// 0035) holds only leased pending rows, so this runs at every claim without walking the
    /// pending rows (12 ms with 100,000 of them, at every claim, before).
    static let expiredLeaseSweep = """
        UPDATE webhook_outbox
        SET dead_lettered_at = $1, lease_owner = NULL, lease_expires_at = NULL,
            last_error = COALESCE(last_error, 'lease_expired')
        WHERE delivered_at IS NULL AND dead_lettered_at IS NULL AND attempts >= $2
          AND lease_expires_at IS NOT NULL AND lease_expires_at <= $1
        RETURNING customer_id, endpoint_id
        """

    /// Marks queue (`customerId`, `endpointId`) drained (migration 0037) when it holds no pending
    /// delivery. On PostgreSQL the queue's row is locked before the emptiness is read, by the
    /// caller (`holds`) or here: an enqueue holds that lock from its upsert to its commit
    /// (`queueReopen`), so the read, a statement that starts after the lock is granted, sees
    /// the enqueued delivery, or the enqueue waits and then finds the queue drained and reopens
    /// it. Unlocked, the read could miss a delivery committed before the update, and the queue
    /// would never be claimed again. A queue another transaction holds is left as it is (`SKIP
    /// LOCKED`): it stays due while empty, costing a probe a round, until `repairDeliveryQueues`.
    @discardableResult
    private func drainIfEmpty(customerId: Int64, endpointId: String, locked: Bool) throws -> Int {
        if dialect == .postgres, !locked {
            let lock = try row(
                """
                SELECT 1 FROM webhook_queues WHERE customer_id = $1 AND endpoint_id = $2 FOR UPDATE SKIP LOCKED
                """, .integer(customerId), .text(endpointId))
            guard lock != nil else { return 0 }
        }
        return try execute(
            """
            UPDATE webhook_queues SET next_attempt_at = NULL
            WHERE customer_id = $1 AND endpoint_id = $2 AND next_attempt_at IS NOT NULL
              AND NOT EXISTS (
                  SELECT 1 FROM webhook_outbox o
                  WHERE o.endpoint_id = $2 AND o.customer_id = $1 AND o.delivered_at IS NULL
                    AND o.dead_lettered_at IS NULL)
            """, .integer(customerId), .text(endpointId))
    }

    /// The claimable queues (`$1` now), `$2` of them, of endpoint `$3` when `endpoint`, oldest due
    /// first; PostgreSQL locks them (`lock`).
    static func deliveryCandidates(lock: String, endpoint: Bool) -> String {
        """
        SELECT q.customer_id, q.endpoint_id FROM webhook_queues q
        WHERE \(claimableQueue(now: "$1", endpoint: endpoint ? "$3" : nil))
        ORDER BY q.next_attempt_at, q.customer_id, q.endpoint_id
        LIMIT $2
        \(lock)
        """
    }

    func dueDeliveryEndpoints(now: Timestamp, limit: Int) throws -> [String] {
        try rows(Self.dueEndpoints, SQLValue(now), SQLValue(limit)).map { row throws(StoreError) in try row.text(0) }
    }

    /// The endpoints with a claimable queue at `$1`, `$2` of them, by their earliest due queue:
    /// each endpoint's first claimable queue is found by walking `webhook_queues_due` in order,
    /// so a round reads a few entries per endpoint, not every queue. Materialized, so that each
    /// endpoint's walk runs once (inlined, both engines ran it for the filter and again for the
    /// order).
    static let dueEndpoints = """
        WITH d AS MATERIALIZED (
            SELECT p.id, (
                SELECT q.next_attempt_at FROM webhook_queues q
                WHERE \(claimableQueue(now: "$1", endpoint: "p.id"))
                ORDER BY q.next_attempt_at
                LIMIT 1) AS due
            FROM webhook_endpoints p)
        SELECT d.id FROM d
        WHERE d.due IS NOT NULL
        ORDER BY d.due, d.id
        LIMIT $2
        """

    func deliveryQueueMismatches(limit: Int) throws -> DeliveryQueueMismatches {
        func queues(_ sql: String) throws -> [DeliveryQueueKey] {
            try rows(sql, SQLValue(limit)).map { row throws(StoreError) in
                DeliveryQueueKey(customerId: try row.integer(0), endpointId: try row.text(1))
            }
        }
        // From the pending deliveries (`webhook_outbox_queue`) and the due queues
        // (`webhook_queues_due`): what has work, never every queue that ever existed.
        return DeliveryQueueMismatches(
            stranded: try queues(
                """
                SELECT DISTINCT o.customer_id, o.endpoint_id FROM webhook_outbox o
                WHERE o.delivered_at IS NULL AND o.dead_lettered_at IS NULL AND o.customer_id IS NOT NULL
                  AND NOT EXISTS (
                      SELECT 1 FROM webhook_queues q
                      WHERE q.customer_id = o.customer_id AND q.endpoint_id = o.endpoint_id
                        AND q.next_attempt_at IS NOT NULL)
                ORDER BY o.customer_id, o.endpoint_id
                LIMIT $1
                """),
            emptyDue: try queues(
                """
                SELECT q.customer_id, q.endpoint_id FROM webhook_queues q
                WHERE q.next_attempt_at IS NOT NULL
                  AND NOT EXISTS (
                      SELECT 1 FROM webhook_outbox o
                      WHERE o.endpoint_id = q.endpoint_id AND o.customer_id = q.customer_id
                        AND o.delivered_at IS NULL AND o.dead_lettered_at IS NULL)
                ORDER BY q.customer_id, q.endpoint_id
                LIMIT $1
                """))
    }

    func repairDeliveryQueues(_ mismatches: DeliveryQueueMismatches, now: Timestamp) throws -> DeliveryQueueRepair {
        // Each checked again here, as things may have moved since the read: a queue is reopened
        // while a delivery is pending in it (as this statement sees it: a delivery ending at the
        // same moment can leave the queue due and empty, which claims skip and the next repair
        // drains), and drained as `drainIfEmpty` does. A queue whose endpoint or customer is
        // being deleted fails its foreign key (PostgreSQL, once the deletion commits): it has
        // nothing left to repair, so it is skipped, in a savepoint, and the others go on.
        var reopened = 0
        for queue in mismatches.stranded.sorted() {
            do {
                reopened += try withSavepoint {
                    try execute(
                        """
                        INSERT INTO webhook_queues (customer_id, endpoint_id, next_attempt_at)
                        SELECT $1, $2, $3 WHERE EXISTS (
                            SELECT 1 FROM webhook_outbox o
                            WHERE o.endpoint_id = $2 AND o.customer_id = $1 AND o.delivered_at IS NULL
                              AND o.dead_lettered_at IS NULL)
                        ON CONFLICT (customer_id, endpoint_id) DO UPDATE SET next_attempt_at = excluded.next_attempt_at
                        WHERE webhook_queues.next_attempt_at IS NULL
                        """, .integer(queue.customerId), .text(queue.endpointId), SQLValue(now))
                }
            } catch let error as StoreError where error.code == .constraintViolation {
                continue
            }
        }
        var drained = 0
        for queue in mismatches.emptyDue.sorted() {
            drained += try drainIfEmpty(customerId: queue.customerId, endpointId: queue.endpointId, locked: false)
        }
        return DeliveryQueueRepair(reopened: reopened, drained: drained)
    }

    func claimDeliveries(
        endpointId: String?, owner: String, now: Timestamp, leaseMilliseconds: Int64, queues: Int, batchSize: Int,
        maxAttempts: Int
    ) throws -> [OutboxDelivery] {
        let swept = try rows(Self.expiredLeaseSweep, SQLValue(now), SQLValue(maxAttempts)).map {
            row throws(StoreError) in DeliveryQueueKey(customerId: try row.integer(0), endpointId: try row.text(1))
        }
        for queue in Set(swept).sorted() {
            try drainIfEmpty(customerId: queue.customerId, endpointId: queue.endpointId, locked: false)
        }
        guard queues > 0, batchSize > 0 else { return [] }
        // PostgreSQL: the queue row is the lock. Its lease columns are re-read once locked (READ
        // COMMITTED rechecks a locked row's conditions), so two claimers never both take a
        // queue; a queue another transaction holds is skipped. SQLite's single writer makes the
        // select-and-update atomic.
        let lock: String
        switch dialect {
        case .postgres: lock = "FOR UPDATE OF q SKIP LOCKED"
        case .sqlite: lock = ""
        }
        var arguments: [SQLValue] = [SQLValue(now), SQLValue(queues)]
        if let endpointId { arguments.append(.text(endpointId)) }
        let candidates = try connection.query(
            Self.deliveryCandidates(lock: lock, endpoint: endpointId != nil), arguments
        ).map { row throws(StoreError) in (customerId: try row.integer(0), endpointId: try row.text(1)) }

        let expiresAt = now.adding(milliseconds: leaseMilliseconds)
        var claimed: [OutboxDelivery] = []
        for queue in candidates {
            // The head and what follows it, read after the lock: a prefix of the queue.
            let batch = try rows(
                """
                SELECT event_row_id FROM webhook_outbox
                WHERE customer_id = $1 AND endpoint_id = $2 AND delivered_at IS NULL AND dead_lettered_at IS NULL
                ORDER BY event_row_id
                LIMIT $3
                """, .integer(queue.customerId), .text(queue.endpointId), SQLValue(batchSize)
            ).map { row throws(StoreError) in try row.integer(0) }
            guard let last = batch.last else { continue }
            guard
                let generation = try row(
                    """
                    UPDATE webhook_queues
                    SET lease_owner = $3, lease_expires_at = $4, lease_generation = lease_generation + 1
                    WHERE customer_id = $1 AND endpoint_id = $2
                    RETURNING lease_generation
                    """, .integer(queue.customerId), .text(queue.endpointId), .text(owner), SQLValue(expiresAt)
                )?.integer(0)
            else { continue }
            let lease = DeliveryLease(
                customerId: queue.customerId, endpointId: queue.endpointId, owner: owner, generation: generation,
                expiresAt: expiresAt)
            let pendingInBatch = """
                o.customer_id = $1 AND o.endpoint_id = $2 AND o.delivered_at IS NULL AND o.dead_lettered_at IS NULL
                  AND o.event_row_id <= $3
                """
            try execute(
                """
                UPDATE webhook_outbox SET lease_owner = $4, lease_expires_at = $5, attempts = attempts + 1
                WHERE id IN (SELECT o.id FROM webhook_outbox o WHERE \(pendingInBatch))
                """, .integer(queue.customerId), .text(queue.endpointId), .integer(last), .text(owner),
                SQLValue(expiresAt))
            claimed += try rows(
                """
                SELECT o.id, o.attempts, o.lease_expires_at,
                       p.id, p.app_id, p.url, p.secret, p.enabled,
                       e.id, e.customer_id, e.event_json, e.created_at
                FROM webhook_outbox o
                JOIN webhook_endpoints p ON p.id = o.endpoint_id
                JOIN lifecycle_events e ON e.id = o.event_row_id
                WHERE \(pendingInBatch)
                ORDER BY o.event_row_id
                """, .integer(queue.customerId), .text(queue.endpointId), .integer(last)
            ).map { row throws(StoreError) in
                OutboxDelivery(
                    id: try row.integer(0), attempt: Int(try row.integer(1)), leaseExpiresAt: try row.timestamp(2),
                    endpoint: try Self.endpoint(row, from: 3), event: try Self.storedEvent(row, from: 8), lease: lease)
            }
        }
        return claimed
    }

    /// Whether `lease` is still the queue's current one, holding the queue's row lock (PostgreSQL)
    /// until the transaction ends, so no claim can take the queue between this check and the
    /// writes that follow it.
    private func holds(_ lease: DeliveryLease) throws -> Bool {
        let lock = dialect == .postgres ? " FOR UPDATE" : ""
        return try row(
            """
            SELECT lease_generation FROM webhook_queues
            WHERE customer_id = $1 AND endpoint_id = $2 AND lease_owner = $3 AND lease_generation = $4
            """ + lock, .integer(lease.customerId), .text(lease.endpointId), .text(lease.owner),
            .integer(lease.generation)) != nil
    }

    func renewDeliveryLease(_ lease: DeliveryLease, now: Timestamp, leaseMilliseconds: Int64) throws
        -> DeliveryLease?
    {
        guard try holds(lease) else { return nil }
        var renewed = lease
        renewed.expiresAt = now.adding(milliseconds: leaseMilliseconds)
        try execute(
            "UPDATE webhook_queues SET lease_expires_at = $3 WHERE customer_id = $1 AND endpoint_id = $2",
            .integer(lease.customerId), .text(lease.endpointId), SQLValue(renewed.expiresAt))
        try execute(
            """
            UPDATE webhook_outbox SET lease_expires_at = $4
            WHERE customer_id = $1 AND endpoint_id = $2 AND lease_owner = $3
              AND delivered_at IS NULL AND dead_lettered_at IS NULL
            """, .integer(lease.customerId), .text(lease.endpointId), .text(lease.owner), SQLValue(renewed.expiresAt))
        return renewed
    }

    func releaseDeliveries(_ lease: DeliveryLease) throws -> Bool {
        guard try holds(lease) else { return false }
        try execute(
            """
            UPDATE webhook_outbox SET lease_owner = NULL, lease_expires_at = NULL, attempts = attempts - 1
            WHERE customer_id = $1 AND endpoint_id = $2 AND lease_owner = $3
              AND delivered_at IS NULL AND dead_lettered_at IS NULL
            """, .integer(lease.customerId), .text(lease.endpointId), .text(lease.owner))
        try execute(
            """
            UPDATE webhook_queues SET lease_owner = NULL, lease_expires_at = NULL
            WHERE customer_id = $1 AND endpoint_id = $2
            """, .integer(lease.customerId), .text(lease.endpointId))
        return true
    }

    func markDelivered(id: Int64, lease: DeliveryLease, at: Timestamp) throws -> Bool {
        guard try holds(lease) else { return false }
        let marked =
            try execute(
                """
                UPDATE webhook_outbox SET delivered_at = $4, lease_owner = NULL, lease_expires_at = NULL
                WHERE id = $1 AND customer_id = $2 AND endpoint_id = $3 AND delivered_at IS NULL
                  AND dead_lettered_at IS NULL
                """, .integer(id), .integer(lease.customerId), .text(lease.endpointId), SQLValue(at)) == 1
        if marked { try drainIfEmpty(customerId: lease.customerId, endpointId: lease.endpointId, locked: true) }
        return marked
    }

    func markFailed(id: Int64, lease: DeliveryLease, error: String, retryAt: Timestamp?, at: Timestamp) throws
        -> Bool
    {
        guard try holds(lease) else { return false }
        let pending = """

            WHERE id = $1 AND customer_id = $2 AND endpoint_id = $3 AND delivered_at IS NULL
              AND dead_lettered_at IS NULL
            """
        guard let retryAt else {
            // Dead-lettered: it no longer holds the rest of the queue back.
            let marked =
                try execute(
                    """
                    UPDATE webhook_outbox SET dead_lettered_at = $5, last_error = $4, lease_owner = NULL,
                                              lease_expires_at = NULL
                    """ + pending, .integer(id), .integer(lease.customerId), .text(lease.endpointId), .text(error),
                    SQLValue(at)) == 1
            if marked { try drainIfEmpty(customerId: lease.customerId, endpointId: lease.endpointId, locked: true) }
            return marked
        }
        let marked =
            try execute(
                """
                UPDATE webhook_outbox SET next_attempt_at = $5, last_error = $4, lease_owner = NULL,
                                          lease_expires_at = NULL
                """ + pending, .integer(id), .integer(lease.customerId), .text(lease.endpointId), .text(error),
                SQLValue(retryAt)) == 1
        // The whole queue waits for its head's retry.
        if marked {
            try execute(
                "UPDATE webhook_queues SET next_attempt_at = $3 WHERE customer_id = $1 AND endpoint_id = $2",
                .integer(lease.customerId), .text(lease.endpointId), SQLValue(retryAt))
        }
        return marked
    }

    func outboxEntry(id: Int64) throws -> OutboxEntry? {
        try row(Self.outboxSelect + " WHERE id = $1", .integer(id)).map(Self.outboxEntry)
    }

    func outboxEntries(eventSequence: Int64) throws -> [OutboxEntry] {
        try rows(Self.outboxSelect + " WHERE event_row_id = $1 ORDER BY id", .integer(eventSequence))
            .map(Self.outboxEntry)
    }

    func failedDeliveries(appId: String, after: Int64?, limit: Int) throws -> [OutboxEntry] {
        // A page per endpoint, each walked in id order through `webhook_outbox_failed` (migration
        // 0038), then merged: the page reads at most `limit` rows per endpoint of the app,
        // whatever the outbox holds besides.
        let endpoints = try rows(
            "SELECT id FROM webhook_endpoints WHERE app_id = $1 ORDER BY id", .text(appId)
        ).map { row throws(StoreError) in try row.text(0) }
        var entries: [OutboxEntry] = []
        for endpointId in endpoints {
            entries += try rows(
                dialect == .postgres ? Self.failedDeliveriesOfEndpointPostgres : Self.failedDeliveriesOfEndpointSQLite,
                .text(endpointId), .integer(after ?? 0), SQLValue(limit)
            ).map(Self.outboxEntry)
        }
        return Array(entries.sorted { $0.id < $1.id }.prefix(max(0, limit)))
    }

    /// Endpoint `$1`'s deliveries that failed and are not delivered, after id `$2`, `$3` of them
    /// in id order. PostgreSQL's text bounds the endpoint by a range and orders by it: given an
    /// equality, its planner may walk the primary key in id order instead, filtering every row of
    /// the outbox when the endpoint has few failures (it estimates the endpoint's share of the
    /// failures, not its own), 44–49 ms with 400,000 rows; a range keeps the index's order the
    /// only one that serves. SQLite bounds the index by the equality and the cursor either way.
    static let failedDeliveriesOfEndpointSQLite = failedDeliveriesOfEndpoint(
        endpoint: "endpoint_id = $1", order: "id")
    static let failedDeliveriesOfEndpointPostgres = failedDeliveriesOfEndpoint(
        endpoint: "endpoint_id >= $1 AND endpoint_id <= $1", order: "endpoint_id, id")

    private static func failedDeliveriesOfEndpoint(endpoint: String, order: String) -> String {
        outboxSelect + """
             WHERE \(endpoint) AND delivered_at IS NULL
              AND (dead_lettered_at IS NOT NULL OR last_error IS NOT NULL)
              AND id > $2
            ORDER BY \(order)
            LIMIT $3
            """
    }

    func outboxBacklog() throws -> OutboxBacklog {
        let row = try row(
            """
            SELECT COUNT(*), MIN(created_at) FROM webhook_outbox
            WHERE delivered_at IS NULL AND dead_lettered_at IS NULL
            """)
        return OutboxBacklog(
            pending: Int(try row?.integer(0) ?? 0), oldestCreatedAt: try row?.optionalTimestamp(1))
    }

    func replayDelivery(id: Int64, appId: String, at: Timestamp) throws -> Bool {
        let replayed =
            try execute(
                """
                UPDATE webhook_outbox
                SET dead_lettered_at = NULL, attempts = 0, next_attempt_at = $3, lease_owner = NULL,
                    lease_expires_at = NULL
                WHERE id = $1 AND dead_lettered_at IS NOT NULL AND delivered_at IS NULL
                  AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE app_id = $2)
                """, .integer(id), .text(appId), SQLValue(at)) == 1
        // Back in its queue (which keeps its schedule, or is due now if it was drained), by event
        // order. The upsert locks the queue as `queueReopen` does.
        if replayed {
            try execute(
                """
                INSERT INTO webhook_queues (customer_id, endpoint_id, next_attempt_at)
                SELECT customer_id, endpoint_id, $2 FROM webhook_outbox WHERE id = $1
                ON CONFLICT (customer_id, endpoint_id) DO UPDATE SET next_attempt_at = excluded.next_attempt_at
                WHERE webhook_queues.next_attempt_at IS NULL
                """, .integer(id), SQLValue(at))
        }
        return replayed
    }

    static let outboxSelect = """
        SELECT id, event_row_id, endpoint_id, attempts, next_attempt_at, lease_owner, lease_expires_at, last_error,
               delivered_at, dead_lettered_at
        FROM webhook_outbox
        """

    static func outboxEntry(_ row: SQLRow) throws(StoreError) -> OutboxEntry {
        OutboxEntry(
            id: try row.integer(0), eventSequence: try row.integer(1), endpointId: try row.text(2),
            attempts: Int(try row.integer(3)), nextAttemptAt: try row.timestamp(4), leaseOwner: try row.optionalText(5),
            leaseExpiresAt: try row.optionalTimestamp(6), lastError: try row.optionalText(7),
            deliveredAt: try row.optionalTimestamp(8), deadLetteredAt: try row.optionalTimestamp(9))
    }
}
