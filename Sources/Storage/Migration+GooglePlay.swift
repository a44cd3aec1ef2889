extension Migration {
    /// Google Play beside the App Store (issue 15).
    ///
    /// `play_app_settings`: an app's Play side, one row per app: the package name, the
    /// service-account key (JSON, sealed by `StoredSecrets` before it gets here, opaque to
    /// storage), the audience and service-account email the RTDN push's OIDC token must carry,
    /// and whether purchases are acknowledged (on by default: Google refunds a purchase not
    /// acknowledged within three days).
    ///
    /// `play_package_names`: which app a package name belongs to, per environment (Play's test
    /// purchases are the sandbox). The primary key makes two apps sharing one package in one
    /// environment impossible, the lesson of two apps sharing a bundle id: every Play fact is
    /// found by package, and a shared one would land in whichever app came first.
    ///
    /// `play_purchase_tokens`: one row per token: the latest snapshot (verbatim JSON and the
    /// decoded fact), the product, the token it replaces, and its acknowledgement (state,
    /// attempts, last error). Ownership is `customer_transactions`, the token taking the place
    /// of an original transaction id, so the identity rules and transfer policies apply as is.
    ///
    /// `play_snapshots`: every read of a token (subscriptionsv2, products) and every voided
    /// purchase, verbatim, unique per (app, kind, token, read instant); of two reads at one
    /// instant the greater (fact, raw) text is kept whatever the arrival order, as the engine
    /// would choose.
    ///
    /// `play_notifications`: each RTDN push body verbatim, unique by (app, `messageId`), so a
    /// redelivered message is a no-op.
    static let googlePlay = Migration(
        identifier: "0014_google_play",
        sqlite: """
            CREATE TABLE play_app_settings (
                app_id TEXT PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
                package_name TEXT NOT NULL,
                service_account_key TEXT,
                rtdn_audience TEXT,
                push_service_account_email TEXT,
                acknowledge_purchases INTEGER NOT NULL DEFAULT 1,
                version BIGINT NOT NULL DEFAULT 1,
                updated_at BIGINT NOT NULL
            );
            CREATE TABLE play_package_names (
                package_name TEXT NOT NULL,
                environment TEXT NOT NULL,
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                PRIMARY KEY (package_name, environment)
            );
            CREATE INDEX play_package_names_app ON play_package_names (app_id);
            CREATE TABLE play_purchase_tokens (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                purchase_token TEXT NOT NULL,
                kind TEXT NOT NULL,
                environment TEXT NOT NULL,
                product_id TEXT NOT NULL,
                linked_purchase_token TEXT,
                latest_read_at BIGINT NOT NULL,
                latest_raw_json TEXT NOT NULL,
                latest_fact_json TEXT NOT NULL,
                acknowledged INTEGER NOT NULL DEFAULT 0,
                acknowledgement_attempts INTEGER NOT NULL DEFAULT 0,
                acknowledgement_error TEXT,
                acknowledgement_attempted_at BIGINT,
                first_received_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, purchase_token)
            );
            CREATE TABLE play_snapshots (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                purchase_token TEXT NOT NULL,
                environment TEXT NOT NULL,
                read_at BIGINT NOT NULL,
                raw_json TEXT NOT NULL,
                fact_json TEXT NOT NULL,
                source TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                UNIQUE (app_id, kind, purchase_token, read_at)
            );
            CREATE INDEX play_snapshots_token ON play_snapshots (app_id, purchase_token);
            CREATE TABLE play_notifications (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                message_id TEXT NOT NULL,
                package_name TEXT,
                notification_kind TEXT NOT NULL,
                notification_type BIGINT,
                purchase_token TEXT,
                event_time BIGINT,
                body TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                processed_at BIGINT,
                outcome TEXT,
                UNIQUE (app_id, message_id)
            );
            """,
        postgres: """
            CREATE TABLE play_app_settings (
                app_id TEXT PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
                package_name TEXT NOT NULL,
                service_account_key TEXT,
                rtdn_audience TEXT,
                push_service_account_email TEXT,
                acknowledge_purchases INTEGER NOT NULL DEFAULT 1,
                version BIGINT NOT NULL DEFAULT 1,
                updated_at BIGINT NOT NULL
            );
            CREATE TABLE play_package_names (
                package_name TEXT NOT NULL,
                environment TEXT NOT NULL,
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                PRIMARY KEY (package_name, environment)
            );
            CREATE INDEX play_package_names_app ON play_package_names (app_id);
            CREATE TABLE play_purchase_tokens (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                purchase_token TEXT NOT NULL,
                kind TEXT NOT NULL,
                environment TEXT NOT NULL,
                product_id TEXT NOT NULL,
                linked_purchase_token TEXT,
                latest_read_at BIGINT NOT NULL,
                latest_raw_json TEXT NOT NULL,
                latest_fact_json TEXT NOT NULL,
                acknowledged INTEGER NOT NULL DEFAULT 0,
                acknowledgement_attempts INTEGER NOT NULL DEFAULT 0,
                acknowledgement_error TEXT,
                acknowledgement_attempted_at BIGINT,
                first_received_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, purchase_token)
            );
            CREATE TABLE play_snapshots (
                id BIGSERIAL PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                purchase_token TEXT NOT NULL,
                environment TEXT NOT NULL,
                read_at BIGINT NOT NULL,
                raw_json TEXT NOT NULL,
                fact_json TEXT NOT NULL,
                source TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                UNIQUE (app_id, kind, purchase_token, read_at)
            );
            CREATE INDEX play_snapshots_token ON play_snapshots (app_id, purchase_token);
            CREATE TABLE play_notifications (
                id BIGSERIAL PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                message_id TEXT NOT NULL,
                package_name TEXT,
                notification_kind TEXT NOT NULL,
                notification_type BIGINT,
                purchase_token TEXT,
                event_time BIGINT,
                body TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                processed_at BIGINT,
                outcome TEXT,
                UNIQUE (app_id, message_id)
            );
            """)
}
