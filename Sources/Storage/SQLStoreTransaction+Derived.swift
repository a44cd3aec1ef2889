import AppStoreModels
import Entitlements

/// Customer state (versioned) and the append-only lifecycle events.
extension SQLStoreTransaction {
    func customerInfo(customerId: Int64, environment: AppStoreEnvironment) throws -> StoredCustomerInfo? {
        try row(
            """
            SELECT info_json, version, updated_at FROM customer_states
            WHERE customer_id = $1 AND environment = $2
            """, .integer(customerId), .text(environment.rawValue)
        ).map { row throws(StoreError) in
            StoredCustomerInfo(
                info: try Self.decode(CustomerInfo.self, try row.text(0), column: "customer_states.info_json"),
                version: try row.integer(1), updatedAt: try row.timestamp(2))
        }
    }

    func saveCustomerInfo(_ info: CustomerInfo, customerId: Int64, expectedVersion: Int64?, at: Timestamp) throws
        -> Int64
    {
        try saveCustomerInfo(
            info, json: Self.jsonText(info), digest: nil, customerId: customerId, expectedVersion: expectedVersion,
            at: at)
    }

    func saveCustomerInfo(
        _ info: CustomerInfo, json: String, digest: String?, customerId: Int64, expectedVersion: Int64?,
        at: Timestamp
    ) throws -> Int64 {
        guard let expectedVersion else {
            let inserted = try execute(
                """
                INSERT INTO customer_states (
                    customer_id, environment, version, info_json, updated_at, valid_until, info_digest,
                    info_digest_version)
                VALUES ($1, $2, 1, $3, $4, $5, $6, 1)
                ON CONFLICT (customer_id, environment) DO NOTHING
                """, .integer(customerId), .text(info.environment.rawValue), .text(json), SQLValue(at),
                .integer(Self.validUntil(info)), SQLValue(digest))
            guard inserted == 1 else {
                throw StoreError(.versionConflict, "customer \(customerId) already has a stored state")
            }
            return 1
        }
        let updated = try execute(
            """
            UPDATE customer_states
            SET version = version + 1, info_json = $3, updated_at = $4, valid_until = $6, info_digest = $7,
                info_digest_version = version + 1
            WHERE customer_id = $1 AND environment = $2 AND version = $5
            """, .integer(customerId), .text(info.environment.rawValue), .text(json), SQLValue(at),
            .integer(expectedVersion), .integer(Self.validUntil(info)), SQLValue(digest))
        guard updated == 1 else {
            throw StoreError(
                .versionConflict, "customer \(customerId) state is no longer at version \(expectedVersion)")
        }
        return expectedVersion + 1
    }

    func appendEvents(_ events: [LifecycleEvent], customerId: Int64, at: Timestamp) throws -> [StoredEvent] {
        var appended: [StoredEvent] = []
        for event in events {
            let id = try insertReturningId(
                """
                INSERT INTO lifecycle_events (customer_id, event_id, environment, type, occurred_at, event_json,
                                              created_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (customer_id, event_id) DO UPDATE
                SET type = excluded.type, occurred_at = excluded.occurred_at, event_json = excluded.event_json,
                    retracted_at = NULL
                WHERE lifecycle_events.retracted_at IS NOT NULL
                RETURNING id
                """,
                [
                    .integer(customerId), .text(event.id), .text(event.environment.rawValue),
                    .text(event.type.rawValue),
                    // Through the cache: `CustomerStateUpdater` has encoded every event of the
                    // evaluation already (for `reviseEvents`), new ones included.
                    SQLValue(event.occurredAt),
                    .text(EventTextCache.shared.text(of: event, customerId: customerId)),
                    SQLValue(at),
                ])
            if let id {
                appended.append(StoredEvent(sequence: id, customerId: customerId, event: event, createdAt: at))
            }
        }
        return appended
    }

    func retractEvents(ids: [String], customerId: Int64, at: Timestamp) throws -> [StoredEvent] {
        var retracted: [StoredEvent] = []
        for id in ids {
            let found = try row(
                """
                UPDATE lifecycle_events SET retracted_at = $3
                WHERE customer_id = $1 AND event_id = $2 AND retracted_at IS NULL
                RETURNING id, customer_id, event_json, created_at
                """, .integer(customerId), .text(id), SQLValue(at))
            if let found {
                var event = try Self.storedEvent(found, from: 0)
                event.retractedAt = at
                retracted.append(event)
            }
        }
        return retracted
    }

    func reviseEvents(_ events: [LifecycleEvent], texts: [String], customerId: Int64) throws -> Int {
        guard !events.isEmpty else { return 0 }
        precondition(texts.count == events.count, "one text per event")
        // The standing events' text is read once and compared here; only events whose text
        // differs are written. (An UPDATE joined to a VALUES list of every event made SQLite
        // compare each stored event with each listed one: a cost in the square of the history.)
        // One text per id: (customer_id, event_id) is unique (by bytes; event ids are ASCII).
        // The stored text is compared in place, not copied (a long history's standing events
        // are hundreds of kilobytes); an event whose id does not stand is left alone.
        // Each id's last event, then through `previous` any earlier one with the same id.
        var lastById: [String: Int] = [:]
        lastById.reserveCapacity(events.count)
        var previous = [Int](repeating: -1, count: events.count)
        for (index, event) in events.enumerated() {
            previous[index] = lastById.updateValue(index, forKey: event.id) ?? -1
        }
        var differs = [Bool](repeating: false, count: events.count)
        try scan(
            "SELECT event_id, event_json FROM lifecycle_events WHERE customer_id = $1 AND retracted_at IS NULL",
            .integer(customerId)
        ) { row throws(StoreError) in
            guard var index = lastById[try row.text(0)] else { return }
            try row.withBytes(1) { stored in
                while index >= 0 {
                    if !StoredText.sameBytes(texts[index], stored) { differs[index] = true }
                    index = previous[index]
                }
            }
        }
        var changed: [LifecycleEvent] = []
        var changedTexts: [String] = []
        for (index, event) in events.enumerated() where differs[index] {
            changed.append(event)
            changedTexts.append(texts[index])
        }
        return try rewriteEvents(changed, texts: changedTexts, customerId: customerId)
    }

    func rewriteEvents(_ events: [LifecycleEvent], texts: [String], customerId: Int64) throws -> Int {
        precondition(texts.count == events.count, "one text per event")
        var revised = 0
        for (event, text) in zip(events, texts) {
            revised += try execute(
                """
                UPDATE lifecycle_events SET event_json = $3, occurred_at = $4
                WHERE customer_id = $1 AND event_id = $2 AND retracted_at IS NULL AND event_json <> $3
                """, .integer(customerId), .text(event.id), .text(text), SQLValue(event.occurredAt))
        }
        return revised
    }

    func events(customerId: Int64, after: Int64?, limit: Int) throws -> [StoredEvent] {
        try rows(
            """
            SELECT id, customer_id, event_json, created_at, retracted_at FROM lifecycle_events
            WHERE customer_id = $1 AND id > $2 ORDER BY id LIMIT $3
            """, .integer(customerId), .integer(after ?? 0), SQLValue(limit)
        ).map { row throws(StoreError) in
            var event = try Self.storedEvent(row, from: 0)
            event.retractedAt = try row.optionalTimestamp(4)
            return event
        }
    }

    static func storedEvent(_ row: SQLRow, from column: Int) throws(StoreError) -> StoredEvent {
        StoredEvent(
            sequence: try row.integer(column), customerId: try row.integer(column + 1),
            event: try event(try row.text(column + 2)),
            createdAt: try row.timestamp(column + 3))
    }

    /// A stored event's text: read straight when it has the shape the store writes, else decoded.
    static func event(_ text: String) throws(StoreError) -> LifecycleEvent {
        if let event = ColumnJSONReader.event(from: text) { return event }
        return try decode(LifecycleEvent.self, text, column: "lifecycle_events.event_json")
    }

    /// `valid_until` for a state: its next scheduled change, or never.
    static func validUntil(_ info: CustomerInfo) -> Int64 {
        info.nextScheduledChange?.millisecondsSince1970 ?? Int64.max
    }

    func customerState(appId: String, knownAs appUserId: String, environment: AppStoreEnvironment) throws
        -> CustomerStateLookup
    {
        // By app user id first, then by alias, as `customer(appId:knownAs:)` resolves: one
        // indexed query each, the state joined in. The digest only at the version it was saved
        // with (see migration 0026).
        let byId = try row(
            """
            SELECT c.id, s.info_json, s.valid_until,
                CASE WHEN s.info_digest_version = s.version THEN s.info_digest END
            FROM customers c
            LEFT JOIN customer_states s ON s.customer_id = c.id AND s.environment = $3
            WHERE c.app_id = $1 AND c.app_user_id = $2
            """, .text(appId), .text(appUserId), .text(environment.rawValue))
        let found =
            try byId
            ?? row(
                """
                SELECT a.customer_id, s.info_json, s.valid_until,
                    CASE WHEN s.info_digest_version = s.version THEN s.info_digest END
                FROM customer_aliases a
                LEFT JOIN customer_states s ON s.customer_id = a.customer_id AND s.environment = $3
                WHERE a.app_id = $1 AND a.alias = $2
                """, .text(appId), .text(appUserId), .text(environment.rawValue))
        guard let found else { return .noCustomer }
        let customerId = try found.integer(0)
        guard let json = try found.optionalText(1) else { return .noState(customerId: customerId) }
        return .state(
            customerId: customerId, infoJSON: json, validUntil: try found.integer(2), digest: try found.optionalText(3))
    }
}
