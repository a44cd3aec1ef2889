extension Migration {
    /// Event identity from the change, not from a count (issue 17, item 6). Events can be
    /// retracted: `retracted_at` marks one a late fact showed never happened (kept, since it may
    /// have been delivered). Stored ids that counted changes (`CANCELLATION/<tx>/<n>`, refunds,
    /// reversals, Family Sharing revocations, withdrawn product changes) get the instant of the
    /// change instead, and scheduled product changes and price-increase consents gain it:
    /// for each of these `occurred_at` is that instant, so the new id is what the engine now
    /// derives for the same change and re-evaluation adds no second event. Where the counting
    /// ids had reported one change twice (the defect), the first row takes the new id and the
    /// others keep their old id, a legacy value that is still unique; the engine retracts them.
    static let eventIdentity = Migration(
        identifier: "0008_event_identity",
        sqlite: """
            ALTER TABLE lifecycle_events ADD COLUMN retracted_at BIGINT;
            CREATE TEMP TABLE event_identity AS
                SELECT id, customer_id,
                       CASE WHEN type IN ('PRICE_INCREASE_CONSENT', 'PRODUCT_CHANGE')
                                 AND event_id NOT LIKE '%/withdrawn/%'
                            THEN event_id || '/' || occurred_at
                            ELSE rtrim(event_id, '0123456789') || occurred_at END AS new_id
                FROM lifecycle_events
                WHERE type IN ('CANCELLATION', 'TRIAL_CANCELLED', 'UNCANCELLATION', 'REFUND', 'REFUND_REVERSED',
                               'FAMILY_SHARING_REVOKED', 'PRICE_INCREASE_CONSENT')
                   OR (type = 'PRODUCT_CHANGE' AND event_id LIKE '%/withdrawn/%')
                   OR (type = 'PRODUCT_CHANGE' AND json_extract(event_json, '$.productChange.timing') = 'AT_NEXT_RENEWAL'
                       AND json_extract(event_json, '$.transactionId') IS NOT NULL
                       AND event_id <> 'PRODUCT_CHANGE/' || json_extract(event_json, '$.transactionId'));
            DELETE FROM event_identity
            WHERE EXISTS (SELECT 1 FROM event_identity earlier
                          WHERE earlier.customer_id = event_identity.customer_id
                            AND earlier.new_id = event_identity.new_id AND earlier.id < event_identity.id);
            UPDATE lifecycle_events
            SET event_id = (SELECT new_id FROM event_identity WHERE event_identity.id = lifecycle_events.id),
                event_json = json_set(event_json, '$.id',
                                      (SELECT new_id FROM event_identity WHERE event_identity.id = lifecycle_events.id))
            WHERE id IN (SELECT id FROM event_identity);
            DROP TABLE event_identity;
            """,
        postgres: """
            ALTER TABLE lifecycle_events ADD COLUMN retracted_at BIGINT;
            CREATE TEMP TABLE event_identity ON COMMIT DROP AS
                SELECT id, customer_id,
                       CASE WHEN type IN ('PRICE_INCREASE_CONSENT', 'PRODUCT_CHANGE')
                                 AND event_id NOT LIKE '%/withdrawn/%'
                            THEN event_id || '/' || occurred_at
                            ELSE rtrim(event_id, '0123456789') || occurred_at END AS new_id
                FROM lifecycle_events
                WHERE type IN ('CANCELLATION', 'TRIAL_CANCELLED', 'UNCANCELLATION', 'REFUND', 'REFUND_REVERSED',
                               'FAMILY_SHARING_REVOKED', 'PRICE_INCREASE_CONSENT')
                   OR (type = 'PRODUCT_CHANGE' AND event_id LIKE '%/withdrawn/%')
                   OR (type = 'PRODUCT_CHANGE' AND event_json::jsonb #>> '{productChange,timing}' = 'AT_NEXT_RENEWAL'
                       AND event_json::jsonb ->> 'transactionId' IS NOT NULL
                       AND event_id <> 'PRODUCT_CHANGE/' || (event_json::jsonb ->> 'transactionId'));
            DELETE FROM event_identity
            WHERE EXISTS (SELECT 1 FROM event_identity earlier
                          WHERE earlier.customer_id = event_identity.customer_id
                            AND earlier.new_id = event_identity.new_id AND earlier.id < event_identity.id);
            UPDATE lifecycle_events e
            SET event_id = i.new_id,
                event_json = jsonb_set(e.event_json::jsonb, '{id}', to_jsonb(i.new_id))::text
            FROM event_identity i
            WHERE i.id = e.id;
            """)
}
