extension Migration {
    /// What consumption answers need (issue 12).
    ///
    /// `consumption_consents`: per app and app user id, whether the customer consented to their
    /// consumption data being sent to Apple, as the app last reported it.
    ///
    /// `consumption_reports`: per app and transaction, the delivery status and usage (thousandths
    /// of a percent, NULL when not reported) the app reported.
    ///
    /// `consumption_answers`: per app and `CONSUMPTION_REQUEST` (its notification UUID), how it
    /// was answered: `sent` with the body sent, or `withheld` with the reason; then the refund
    /// decision Apple notified for the same transaction (`REFUND` or `REFUND_DECLINED`).
    static let consumption = Migration(
        identifier: "0011_consumption",
        sqlite: """
            CREATE TABLE consumption_consents (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                app_user_id TEXT NOT NULL,
                consented INTEGER NOT NULL,
                recorded_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, app_user_id)
            );
            CREATE TABLE consumption_reports (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                transaction_id TEXT NOT NULL,
                delivery_status TEXT NOT NULL,
                consumption_percentage INTEGER,
                recorded_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, transaction_id)
            );
            CREATE TABLE consumption_answers (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                notification_uuid TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                outcome TEXT NOT NULL,
                reason TEXT,
                request TEXT,
                answered_at BIGINT NOT NULL,
                refund_outcome TEXT,
                refund_outcome_at BIGINT,
                PRIMARY KEY (app_id, notification_uuid)
            );
            CREATE INDEX consumption_answers_transaction ON consumption_answers (app_id, transaction_id);
            """,
        postgres: """
            CREATE TABLE consumption_consents (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                app_user_id TEXT NOT NULL,
                consented INTEGER NOT NULL,
                recorded_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, app_user_id)
            );
            CREATE TABLE consumption_reports (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                transaction_id TEXT NOT NULL,
                delivery_status TEXT NOT NULL,
                consumption_percentage INTEGER,
                recorded_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, transaction_id)
            );
            CREATE TABLE consumption_answers (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                notification_uuid TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                outcome TEXT NOT NULL,
                reason TEXT,
                request TEXT,
                answered_at BIGINT NOT NULL,
                refund_outcome TEXT,
                refund_outcome_at BIGINT,
                PRIMARY KEY (app_id, notification_uuid)
            );
            CREATE INDEX consumption_answers_transaction ON consumption_answers (app_id, transaction_id);
            """)
}
