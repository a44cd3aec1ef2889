extension Migration {
    /// Every uniqueness key of a fact, and the job queue's dedupe key, include the app.
    ///
    /// Before it, signed transactions were unique on (environment, transaction_id, signed_date),
    /// renewal infos on (environment, original_transaction_id, signed_date), notifications on
    /// notification_uuid and jobs on dedupe_key, while every read is per app: the same signed
    /// payload stored for one app was a silent no-op for another (twin apps with one bundle id,
    /// or a tenant's own CA signing another app's transactionId and signedDate first), and that
    /// app's genuine purchase answered 200 with no entitlement.
    ///
    /// Existing rows are kept with their ids (cursors and outbox rows refer to them); the old
    /// keys are a subset of the new ones' columns, so existing rows satisfy the new keys. Jobs
    /// gain `app_id` (NULL for a job of no app, whose dedupe key stays global); queued
    /// `consumption_request` jobs take it from their payload's `appId`.
    ///
    /// SQLite cannot drop a table constraint: each table is rebuilt as SQLite documents for
    /// schema changes ALTER TABLE cannot make (create the new table, copy, drop the old one,
    /// rename, recreate its indexes), inside the migration's transaction. No foreign key refers
    /// to these four tables, so foreign key enforcement can stay on. PostgreSQL drops the old
    /// constraints by the names it gave them in 0001 and adds the new ones.
    static let perAppKeys = Migration(
        identifier: "0004_per_app_keys",
        sqlite: """
            CREATE TABLE signed_transactions_new (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id),
                environment TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                signed_date BIGINT NOT NULL,
                jws TEXT,
                source TEXT NOT NULL,
                fact_json TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                UNIQUE (app_id, environment, transaction_id, signed_date)
            );
            INSERT INTO signed_transactions_new (id, app_id, environment, transaction_id, original_transaction_id,
                                                 product_id, signed_date, jws, source, fact_json, received_at)
            SELECT id, app_id, environment, transaction_id, original_transaction_id, product_id, signed_date, jws,
                   source, fact_json, received_at
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
                jws TEXT,
                source TEXT NOT NULL,
                fact_json TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                UNIQUE (app_id, environment, original_transaction_id, signed_date)
            );
            INSERT INTO signed_renewal_infos_new (id, app_id, environment, original_transaction_id, product_id,
                                                  signed_date, jws, source, fact_json, received_at)
            SELECT id, app_id, environment, original_transaction_id, product_id, signed_date, jws, source, fact_json,
                   received_at
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
                signed_payload TEXT NOT NULL,
                fact_json TEXT,
                received_at BIGINT NOT NULL,
                processed_at BIGINT,
                outcome TEXT,
                UNIQUE (app_id, notification_uuid)
            );
            INSERT INTO notifications_new (id, app_id, notification_uuid, notification_type, subtype, environment,
                                           original_transaction_id, signed_date, signed_payload, fact_json,
                                           received_at, processed_at, outcome)
            SELECT id, app_id, notification_uuid, notification_type, subtype, environment, original_transaction_id,
                   signed_date, signed_payload, fact_json, received_at, processed_at, outcome
            FROM notifications;
            DROP TABLE notifications;
            ALTER TABLE notifications_new RENAME TO notifications;
            CREATE INDEX notifications_original ON notifications (app_id, original_transaction_id);

            CREATE TABLE jobs_new (
                id INTEGER PRIMARY KEY,
                kind TEXT NOT NULL,
                payload TEXT NOT NULL,
                dedupe_key TEXT,
                run_at BIGINT NOT NULL,
                attempts INTEGER NOT NULL,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                last_error TEXT,
                completed_at BIGINT,
                failed_at BIGINT,
                created_at BIGINT NOT NULL,
                app_id TEXT REFERENCES apps (id)
            );
            INSERT INTO jobs_new (id, kind, payload, dedupe_key, run_at, attempts, lease_owner, lease_expires_at,
                                  last_error, completed_at, failed_at, created_at, app_id)
            SELECT id, kind, payload, dedupe_key, run_at, attempts, lease_owner, lease_expires_at, last_error,
                   completed_at, failed_at, created_at,
                   CASE WHEN kind = 'consumption_request' AND json_valid(payload)
                        THEN (SELECT a.id FROM apps a WHERE a.id = json_extract(jobs.payload, '$.appId')) END
            FROM jobs;
            DROP TABLE jobs;
            ALTER TABLE jobs_new RENAME TO jobs;
            CREATE INDEX jobs_due ON jobs (run_at) WHERE completed_at IS NULL AND failed_at IS NULL;
            CREATE UNIQUE INDEX jobs_app_dedupe ON jobs (app_id, dedupe_key) WHERE app_id IS NOT NULL;
            CREATE UNIQUE INDEX jobs_global_dedupe ON jobs (dedupe_key) WHERE app_id IS NULL;
            """,
        postgres: """
            ALTER TABLE signed_transactions
                DROP CONSTRAINT signed_transactions_environment_transaction_id_signed_date_key,
                ADD CONSTRAINT signed_transactions_app_key UNIQUE (app_id, environment, transaction_id, signed_date);
            ALTER TABLE signed_renewal_infos
                DROP CONSTRAINT signed_renewal_infos_environment_original_transaction_id_si_key,
                ADD CONSTRAINT signed_renewal_infos_app_key
                    UNIQUE (app_id, environment, original_transaction_id, signed_date);
            ALTER TABLE notifications
                DROP CONSTRAINT notifications_notification_uuid_key,
                ADD CONSTRAINT notifications_app_key UNIQUE (app_id, notification_uuid);

            ALTER TABLE jobs ADD COLUMN app_id TEXT REFERENCES apps (id);
            UPDATE jobs SET app_id = (SELECT a.id FROM apps a WHERE a.id = jobs.payload::jsonb ->> 'appId')
            WHERE kind = 'consumption_request';
            ALTER TABLE jobs DROP CONSTRAINT jobs_dedupe_key_key;
            CREATE UNIQUE INDEX jobs_app_dedupe ON jobs (app_id, dedupe_key) WHERE app_id IS NOT NULL;
            CREATE UNIQUE INDEX jobs_global_dedupe ON jobs (dedupe_key) WHERE app_id IS NULL;
            """)
}
