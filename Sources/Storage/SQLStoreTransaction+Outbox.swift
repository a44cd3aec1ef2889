import AppStoreModels

/// The webhook outbox: rows committed with the events, leased by delivery workers.
extension SQLStoreTransaction {
    func enqueueDeliveries(of events: [StoredEvent], appId: String, at: Timestamp) throws -> Int {
        var added = 0
        for event in events {
            added += try execute(
                """
                INSERT INTO webhook_outbox (event_row_id, endpoint_id, attempts, next_attempt_at, created_at)
                SELECT $1, id, 0, $2, $2 FROM webhook_endpoints WHERE app_id = $3 AND enabled = 1
                ON CONFLICT (event_row_id, endpoint_id) DO NOTHING
                """, .integer(event.sequence), SQLValue(at), .text(appId))
        }
        return added
    }

    func claimDeliveries(owner: String, now: Timestamp, leaseMilliseconds: Int64, limit: Int, maxAttempts: Int)
        throws -> [OutboxDelivery]
    {
        try claim(
            endpointId: nil, owner: owner, now: now, leaseMilliseconds: leaseMilliseconds, limit: limit,
            maxAttempts: maxAttempts)
    }

    func claimDeliveries(
        endpointId: String, owner: String, now: Timestamp, leaseMilliseconds: Int64, limit: Int, maxAttempts: Int
    ) throws -> [OutboxDelivery] {
        try claim(
            endpointId: endpointId, owner: owner, now: now, leaseMilliseconds: leaseMilliseconds, limit: limit,
            maxAttempts: maxAttempts)
    }

    func dueDeliveryEndpoints(now: Timestamp, limit: Int) throws -> [String] {
        try rows(
            """
            SELECT o.endpoint_id FROM webhook_outbox o
            JOIN lifecycle_events e ON e.id = o.event_row_id
            WHERE \(Self.claimable(now: "$1"))
            GROUP BY o.endpoint_id
            ORDER BY MIN(o.next_attempt_at), o.endpoint_id
            LIMIT $2
            """, SQLValue(now), SQLValue(limit)
        ).map { row throws(StoreError) in try row.text(0) }
    }

    /// Whether outbox row `o` (of event `e`) may be claimed at the parameter `now`: pending, due,
    /// unleased, and no earlier event of the same customer waits (scheduled later or leased) for
    /// the same endpoint. A dead-lettered earlier delivery does not hold later ones back.
    static func claimable(now: String) -> String {
        """
        o.delivered_at IS NULL AND o.dead_lettered_at IS NULL AND o.next_attempt_at <= \(now)
          AND (o.lease_expires_at IS NULL OR o.lease_expires_at <= \(now))
          AND NOT EXISTS (
              SELECT 1 FROM lifecycle_events pe
              JOIN webhook_outbox p ON p.event_row_id = pe.id AND p.endpoint_id = o.endpoint_id
              WHERE pe.customer_id = e.customer_id AND pe.id < o.event_row_id
                AND p.delivered_at IS NULL AND p.dead_lettered_at IS NULL
                AND (p.next_attempt_at > \(now) OR p.lease_expires_at > \(now)))
        """
    }

    func releaseDelivery(id: Int64, owner: String, nextAttemptAt: Timestamp) throws -> Bool {
        try execute(
            """
            UPDATE webhook_outbox SET lease_owner = NULL, lease_expires_at = NULL, attempts = attempts - 1,
                                      next_attempt_at = $3
            WHERE id = $1 AND lease_owner = $2 AND delivered_at IS NULL AND dead_lettered_at IS NULL
            """, .integer(id), .text(owner), SQLValue(nextAttemptAt)) == 1
    }

    private func claim(
        endpointId: String?, owner: String, now: Timestamp, leaseMilliseconds: Int64, limit: Int, maxAttempts: Int
    ) throws -> [OutboxDelivery] {
        // A worker that crashed during its last allowed attempt leaves an expired lease.
        try execute(
            """
            UPDATE webhook_outbox
            SET dead_lettered_at = $1, lease_owner = NULL, lease_expires_at = NULL,
                last_error = COALESCE(last_error, 'lease_expired')
            WHERE delivered_at IS NULL AND dead_lettered_at IS NULL AND attempts >= $2
              AND lease_expires_at IS NOT NULL AND lease_expires_at <= $1
            """, SQLValue(now), SQLValue(maxAttempts))
        // Event order (`event_row_id`) keeps each customer's claimed deliveries to an endpoint a
        // prefix of its queue whatever the limit cuts.
        let endpointFilter = endpointId == nil ? "" : "AND o.endpoint_id = $5"
        let lock: String
        switch dialect {
        case .postgres: lock = "FOR UPDATE OF o SKIP LOCKED"
        // The single writer makes the select-and-update atomic.
        case .sqlite: lock = ""
        }
        let claimSQL = """
            UPDATE webhook_outbox SET lease_owner = $1, lease_expires_at = $2, attempts = attempts + 1
            WHERE id IN (
                SELECT o.id FROM webhook_outbox o
                JOIN lifecycle_events e ON e.id = o.event_row_id
                WHERE \(Self.claimable(now: "$3")) \(endpointFilter)
                ORDER BY o.event_row_id, o.id
                LIMIT $4
                \(lock))
            RETURNING id
            """
        var arguments: [SQLValue] = [
            .text(owner), SQLValue(now.adding(milliseconds: leaseMilliseconds)), SQLValue(now), SQLValue(limit),
        ]
        if let endpointId { arguments.append(.text(endpointId)) }
        let ids = try connection.query(claimSQL, arguments).map { row throws(StoreError) in try row.integer(0) }
            .sorted()
        return try ids.compactMap { id throws(StoreError) in
            try row(
                """
                SELECT o.id, o.attempts, o.lease_expires_at,
                       p.id, p.app_id, p.url, p.secret, p.enabled,
                       e.id, e.customer_id, e.event_json, e.created_at
                FROM webhook_outbox o
                JOIN webhook_endpoints p ON p.id = o.endpoint_id
                JOIN lifecycle_events e ON e.id = o.event_row_id
                WHERE o.id = $1
                """, .integer(id)
            ).map { row throws(StoreError) in
                OutboxDelivery(
                    id: try row.integer(0), attempt: Int(try row.integer(1)), leaseExpiresAt: try row.timestamp(2),
                    endpoint: try Self.endpoint(row, from: 3), event: try Self.storedEvent(row, from: 8))
            }
        }
    }

    func markDelivered(id: Int64, owner: String, at: Timestamp) throws -> Bool {
        try execute(
            """
            UPDATE webhook_outbox SET delivered_at = $3, lease_owner = NULL, lease_expires_at = NULL
            WHERE id = $1 AND lease_owner = $2 AND delivered_at IS NULL AND dead_lettered_at IS NULL
            """, .integer(id), .text(owner), SQLValue(at)) == 1
    }

    func markFailed(id: Int64, owner: String, error: String, retryAt: Timestamp?, at: Timestamp) throws -> Bool {
        if let retryAt {
            return try execute(
                """
                UPDATE webhook_outbox SET next_attempt_at = $4, last_error = $3, lease_owner = NULL,
                                          lease_expires_at = NULL
                WHERE id = $1 AND lease_owner = $2 AND delivered_at IS NULL AND dead_lettered_at IS NULL
                """, .integer(id), .text(owner), .text(error), SQLValue(retryAt)) == 1
        }
        return try execute(
            """
            UPDATE webhook_outbox SET dead_lettered_at = $4, last_error = $3, lease_owner = NULL,
                                      lease_expires_at = NULL
            WHERE id = $1 AND lease_owner = $2 AND delivered_at IS NULL AND dead_lettered_at IS NULL
            """, .integer(id), .text(owner), .text(error), SQLValue(at)) == 1
    }

    func outboxEntry(id: Int64) throws -> OutboxEntry? {
        try row(Self.outboxSelect + " WHERE id = $1", .integer(id)).map(Self.outboxEntry)
    }

    func outboxEntries(eventSequence: Int64) throws -> [OutboxEntry] {
        try rows(Self.outboxSelect + " WHERE event_row_id = $1 ORDER BY id", .integer(eventSequence))
            .map(Self.outboxEntry)
    }

    func failedDeliveries(appId: String, after: Int64?, limit: Int) throws -> [OutboxEntry] {
        try rows(
            Self.outboxSelect + """
                 WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE app_id = $1)
                  AND delivered_at IS NULL AND (dead_lettered_at IS NOT NULL OR last_error IS NOT NULL)
                  AND id > $2
                ORDER BY id
                LIMIT $3
                """, .text(appId), .integer(after ?? 0), SQLValue(limit)
        ).map(Self.outboxEntry)
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
        try execute(
            """
            UPDATE webhook_outbox
            SET dead_lettered_at = NULL, attempts = 0, next_attempt_at = $3, lease_owner = NULL, lease_expires_at = NULL
            WHERE id = $1 AND dead_lettered_at IS NOT NULL AND delivered_at IS NULL
              AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE app_id = $2)
            """, .integer(id), .text(appId), SQLValue(at)) == 1
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
