extension Migration {
    /// Apps, customers, facts, derived state, outbox, jobs, audit log.
    /// Times are BIGINT epoch milliseconds; flags are INTEGER 0/1; JSON is TEXT.
    static let initialSchema = Migration(
        identifier: "0001_initial_schema",
        sqlite: """
            CREATE TABLE apps (
                id TEXT PRIMARY KEY,
                bundle_id TEXT NOT NULL,
                app_apple_id BIGINT,
                environments TEXT NOT NULL,
                shared_secret TEXT,
                settings_json TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            );
            CREATE TABLE product_catalogs (
                app_id TEXT PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
                catalog_json TEXT NOT NULL,
                updated_at BIGINT NOT NULL
            );
            CREATE TABLE api_keys (
                id TEXT PRIMARY KEY,
                app_id TEXT REFERENCES apps (id) ON DELETE CASCADE,
                kind TEXT NOT NULL CHECK (kind IN ('public', 'secret', 'admin')),
                key_hash TEXT NOT NULL UNIQUE,
                label TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                revoked_at BIGINT
            );
            CREATE TABLE webhook_endpoints (
                id TEXT PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                url TEXT NOT NULL,
                secret TEXT NOT NULL,
                enabled INTEGER NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            );
            CREATE INDEX webhook_endpoints_app ON webhook_endpoints (app_id);

            CREATE TABLE customers (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id),
                app_user_id TEXT NOT NULL,
                first_seen_at BIGINT NOT NULL,
                last_seen_at BIGINT NOT NULL,
                UNIQUE (app_id, app_user_id)
            );
            CREATE TABLE customer_aliases (
                app_id TEXT NOT NULL,
                alias TEXT NOT NULL,
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, alias)
            );
            CREATE INDEX customer_aliases_customer ON customer_aliases (customer_id);
            CREATE TABLE customer_app_account_tokens (
                app_id TEXT NOT NULL,
                token TEXT NOT NULL,
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, token)
            );
            CREATE INDEX customer_app_account_tokens_customer ON customer_app_account_tokens (customer_id);
            CREATE TABLE customer_transactions (
                app_id TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                claimed_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, original_transaction_id)
            );
            CREATE INDEX customer_transactions_customer ON customer_transactions (customer_id);

            CREATE TABLE signed_transactions (
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
                UNIQUE (environment, transaction_id, signed_date)
            );
            CREATE INDEX signed_transactions_original ON signed_transactions (app_id, original_transaction_id);
            CREATE TABLE signed_renewal_infos (
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
                UNIQUE (environment, original_transaction_id, signed_date)
            );
            CREATE INDEX signed_renewal_infos_original ON signed_renewal_infos (app_id, original_transaction_id);
            CREATE TABLE receipt_validations (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id),
                customer_id BIGINT REFERENCES customers (id) ON DELETE SET NULL,
                environment TEXT,
                receipt_data TEXT NOT NULL,
                response_body TEXT,
                received_at BIGINT NOT NULL
            );
            CREATE TABLE notifications (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id),
                notification_uuid TEXT NOT NULL UNIQUE,
                notification_type TEXT NOT NULL,
                subtype TEXT,
                environment TEXT,
                original_transaction_id TEXT,
                signed_date BIGINT NOT NULL,
                signed_payload TEXT NOT NULL,
                fact_json TEXT,
                received_at BIGINT NOT NULL,
                processed_at BIGINT,
                outcome TEXT
            );
            CREATE INDEX notifications_original ON notifications (app_id, original_transaction_id);

            CREATE TABLE customer_states (
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                version BIGINT NOT NULL CHECK (version > 0),
                info_json TEXT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (customer_id, environment)
            );
            CREATE TABLE lifecycle_events (
                id INTEGER PRIMARY KEY,
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                event_id TEXT NOT NULL,
                environment TEXT NOT NULL,
                type TEXT NOT NULL,
                occurred_at BIGINT NOT NULL,
                event_json TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                UNIQUE (customer_id, event_id)
            );
            CREATE TABLE webhook_outbox (
                id INTEGER PRIMARY KEY,
                event_row_id BIGINT NOT NULL REFERENCES lifecycle_events (id) ON DELETE CASCADE,
                endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
                attempts INTEGER NOT NULL,
                next_attempt_at BIGINT NOT NULL,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                last_error TEXT,
                delivered_at BIGINT,
                dead_lettered_at BIGINT,
                created_at BIGINT NOT NULL,
                UNIQUE (event_row_id, endpoint_id)
            );
            CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at)
                WHERE delivered_at IS NULL AND dead_lettered_at IS NULL;
            CREATE TABLE jobs (
                id INTEGER PRIMARY KEY,
                kind TEXT NOT NULL,
                payload TEXT NOT NULL,
                dedupe_key TEXT UNIQUE,
                run_at BIGINT NOT NULL,
                attempts INTEGER NOT NULL,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                last_error TEXT,
                completed_at BIGINT,
                failed_at BIGINT,
                created_at BIGINT NOT NULL
            );
            CREATE INDEX jobs_due ON jobs (run_at) WHERE completed_at IS NULL AND failed_at IS NULL;
            CREATE TABLE audit_log (
                id INTEGER PRIMARY KEY,
                at BIGINT NOT NULL,
                actor TEXT NOT NULL,
                action TEXT NOT NULL,
                app_id TEXT,
                detail_json TEXT NOT NULL
            );
            """,
        postgres: """
            CREATE TABLE apps (
                id TEXT PRIMARY KEY,
                bundle_id TEXT NOT NULL,
                app_apple_id BIGINT,
                environments TEXT NOT NULL,
                shared_secret TEXT,
                settings_json TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            );
            CREATE TABLE product_catalogs (
                app_id TEXT PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
                catalog_json TEXT NOT NULL,
                updated_at BIGINT NOT NULL
            );
            CREATE TABLE api_keys (
                id TEXT PRIMARY KEY,
                app_id TEXT REFERENCES apps (id) ON DELETE CASCADE,
                kind TEXT NOT NULL CHECK (kind IN ('public', 'secret', 'admin')),
                key_hash TEXT NOT NULL UNIQUE,
                label TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                revoked_at BIGINT
            );
            CREATE TABLE webhook_endpoints (
                id TEXT PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                url TEXT NOT NULL,
                secret TEXT NOT NULL,
                enabled INTEGER NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            );
            CREATE INDEX webhook_endpoints_app ON webhook_endpoints (app_id);

            CREATE TABLE customers (
                id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id),
                app_user_id TEXT NOT NULL,
                first_seen_at BIGINT NOT NULL,
                last_seen_at BIGINT NOT NULL,
                UNIQUE (app_id, app_user_id)
            );
            CREATE TABLE customer_aliases (
                app_id TEXT NOT NULL,
                alias TEXT NOT NULL,
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, alias)
            );
            CREATE INDEX customer_aliases_customer ON customer_aliases (customer_id);
            CREATE TABLE customer_app_account_tokens (
                app_id TEXT NOT NULL,
                token TEXT NOT NULL,
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, token)
            );
            CREATE INDEX customer_app_account_tokens_customer ON customer_app_account_tokens (customer_id);
            CREATE TABLE customer_transactions (
                app_id TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                claimed_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, original_transaction_id)
            );
            CREATE INDEX customer_transactions_customer ON customer_transactions (customer_id);

            CREATE TABLE signed_transactions (
                id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
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
                UNIQUE (environment, transaction_id, signed_date)
            );
            CREATE INDEX signed_transactions_original ON signed_transactions (app_id, original_transaction_id);
            CREATE TABLE signed_renewal_infos (
                id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id),
                environment TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                signed_date BIGINT NOT NULL,
                jws TEXT,
                source TEXT NOT NULL,
                fact_json TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                UNIQUE (environment, original_transaction_id, signed_date)
            );
            CREATE INDEX signed_renewal_infos_original ON signed_renewal_infos (app_id, original_transaction_id);
            CREATE TABLE receipt_validations (
                id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id),
                customer_id BIGINT REFERENCES customers (id) ON DELETE SET NULL,
                environment TEXT,
                receipt_data TEXT NOT NULL,
                response_body TEXT,
                received_at BIGINT NOT NULL
            );
            CREATE TABLE notifications (
                id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id),
                notification_uuid TEXT NOT NULL UNIQUE,
                notification_type TEXT NOT NULL,
                subtype TEXT,
                environment TEXT,
                original_transaction_id TEXT,
                signed_date BIGINT NOT NULL,
                signed_payload TEXT NOT NULL,
                fact_json TEXT,
                received_at BIGINT NOT NULL,
                processed_at BIGINT,
                outcome TEXT
            );
            CREATE INDEX notifications_original ON notifications (app_id, original_transaction_id);

            CREATE TABLE customer_states (
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                version BIGINT NOT NULL CHECK (version > 0),
                info_json TEXT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (customer_id, environment)
            );
            CREATE TABLE lifecycle_events (
                id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                event_id TEXT NOT NULL,
                environment TEXT NOT NULL,
                type TEXT NOT NULL,
                occurred_at BIGINT NOT NULL,
                event_json TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                UNIQUE (customer_id, event_id)
            );
            CREATE TABLE webhook_outbox (
                id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                event_row_id BIGINT NOT NULL REFERENCES lifecycle_events (id) ON DELETE CASCADE,
                endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
                attempts INTEGER NOT NULL,
                next_attempt_at BIGINT NOT NULL,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                last_error TEXT,
                delivered_at BIGINT,
                dead_lettered_at BIGINT,
                created_at BIGINT NOT NULL,
                UNIQUE (event_row_id, endpoint_id)
            );
            CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at)
                WHERE delivered_at IS NULL AND dead_lettered_at IS NULL;
            CREATE TABLE jobs (
                id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                kind TEXT NOT NULL,
                payload TEXT NOT NULL,
                dedupe_key TEXT UNIQUE,
                run_at BIGINT NOT NULL,
                attempts INTEGER NOT NULL,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                last_error TEXT,
                completed_at BIGINT,
                failed_at BIGINT,
                created_at BIGINT NOT NULL
            );
            CREATE INDEX jobs_due ON jobs (run_at) WHERE completed_at IS NULL AND failed_at IS NULL;
            CREATE TABLE audit_log (
                id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                at BIGINT NOT NULL,
                actor TEXT NOT NULL,
                action TEXT NOT NULL,
                app_id TEXT,
                detail_json TEXT NOT NULL
            );
            """)
}
