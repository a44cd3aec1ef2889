extension Migration {
    /// SQLite: each fact row's `fact_json` (and its other short columns) before its signed
    /// payload.
    ///
    /// SQLite reads a row's columns in order, and a row longer than a page keeps its tail in a
    /// chain of overflow pages: `fact_json`, written after a notification's `signedPayload`
    /// (about 11.5 KB) or a transaction's JWS (about 3.4 KB), was reached only by walking that
    /// chain. Reading a customer's facts, which every ingestion does, touched each row's whole
    /// payload: 2.5 µs a notification and 1.7 µs a transaction or renewal info against 0.1–0.3 µs
    /// for a column before it (measured on a 10,000-customer store). With the payload last,
    /// `fact_json` sits in the row's first page (or the first overflow page) and the payload is
    /// read only when asked for.
    ///
    /// Rebuilt as 0004 rebuilt them (create, copy with their ids, drop, rename, recreate the
    /// indexes; no foreign key refers to these tables), in the migration's transaction, before the
    /// store opens: every fact row is copied once. Measured on the project's 2-core test machine:
    /// 4.3 s for 10,000 notifications with their transactions and renewal infos (200 MB), so
    /// minutes for millions. The old tables' pages stay in the file as free pages (reused by
    /// later writes; `VACUUM` returns them). Measured on the worst-case benchmark with rows of
    /// Apple's sizes: the 1,003rd fact of one customer 10.4 / 10.0 ms before, 8.8 / 8.7 ms after
    /// (two alternating pairs). PostgreSQL reads a column without the out-of-line values before
    /// it (0024) and has nothing to change.
    static let factsBeforePayloads = Migration(
        identifier: "0025_facts_before_payloads",
        sqlite: """
            CREATE TABLE signed_transactions_new (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id),
                environment TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                signed_date BIGINT NOT NULL,
                source TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                fact_json TEXT NOT NULL,
                jws TEXT,
                UNIQUE (app_id, environment, transaction_id, signed_date)
            );
            INSERT INTO signed_transactions_new (id, app_id, environment, transaction_id, original_transaction_id,
                                                 product_id, signed_date, source, received_at, fact_json, jws)
            SELECT id, app_id, environment, transaction_id, original_transaction_id, product_id, signed_date, source,
                   received_at, fact_json, jws
            FROM signed_transactions;
            DROP TABLE signed_transactions;
            ALTER TABLE signed_transactions_new RENAME TO signed_transactions;
            CREATE INDEX signed_transactions_original ON signed_transactions (app_id, original_transaction_id);

            CREATE TABLE signed_renewal_infos_new (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id),
                environment TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                signed_date BIGINT NOT NULL,
                source TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                fact_json TEXT NOT NULL,
                jws TEXT,
                UNIQUE (app_id, environment, original_transaction_id, signed_date)
            );
            INSERT INTO signed_renewal_infos_new (id, app_id, environment, original_transaction_id, product_id,
                                                  signed_date, source, received_at, fact_json, jws)
            SELECT id, app_id, environment, original_transaction_id, product_id, signed_date, source, received_at,
                   fact_json, jws
            FROM signed_renewal_infos;
            DROP TABLE signed_renewal_infos;
            ALTER TABLE signed_renewal_infos_new RENAME TO signed_renewal_infos;
            CREATE INDEX signed_renewal_infos_original ON signed_renewal_infos (app_id, original_transaction_id);

            CREATE TABLE notifications_new (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id),
                notification_uuid TEXT NOT NULL,
                notification_type TEXT NOT NULL,
                subtype TEXT,
                environment TEXT,
                original_transaction_id TEXT,
                signed_date BIGINT NOT NULL,
                received_at BIGINT NOT NULL,
                processed_at BIGINT,
                outcome TEXT,
                fact_json TEXT,
                signed_payload TEXT NOT NULL,
                UNIQUE (app_id, notification_uuid)
            );
            INSERT INTO notifications_new (id, app_id, notification_uuid, notification_type, subtype, environment,
                                           original_transaction_id, signed_date, received_at, processed_at, outcome,
                                           fact_json, signed_payload)
            SELECT id, app_id, notification_uuid, notification_type, subtype, environment, original_transaction_id,
                   signed_date, received_at, processed_at, outcome, fact_json, signed_payload
            FROM notifications;
            DROP TABLE notifications;
            ALTER TABLE notifications_new RENAME TO notifications;
            CREATE INDEX notifications_original ON notifications (app_id, original_transaction_id);
            """,
        postgres: """
            -- Nothing to change: PostgreSQL reads a column without walking the values stored before it
            -- (a statement all the same: PostgreSQL refuses a script of comments alone).
            SELECT 1;
            """)
}
