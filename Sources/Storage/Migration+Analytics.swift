extension Migration {
    /// Analytics (issue 13, docs/analytics.md).
    ///
    /// `analytics_settings`: per app, the analytics terms (reporting currency, rate table,
    /// Small Business Program periods, commission rates per storefront) as JSON, versioned for
    /// `If-Match`.
    ///
    /// `analytics_contributions`: per customer and environment, what its facts last added to
    /// the daily rows (`AnalyticsContribution`), so a re-evaluation adds only the difference.
    ///
    /// `analytics_daily`: the aggregates, per app, environment, UTC day (days since 1970),
    /// product, subscription group, storefront and currency (empty when none), one column per
    /// `AnalyticsMeasures` field. Kept in the transaction that commits the facts.
    static let analytics = Migration(
        identifier: "0012_analytics",
        sqlite: """
            CREATE TABLE analytics_settings (
                app_id TEXT PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
                settings_json TEXT NOT NULL,
                version BIGINT NOT NULL DEFAULT 1,
                updated_at BIGINT NOT NULL
            );
            CREATE TABLE analytics_contributions (
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                app_id TEXT NOT NULL,
                contribution_json TEXT NOT NULL,
                PRIMARY KEY (customer_id, environment)
            );
            CREATE INDEX analytics_contributions_app ON analytics_contributions (app_id, environment);
            CREATE TABLE analytics_daily (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                day BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                subscription_group TEXT NOT NULL,
                storefront TEXT NOT NULL,
                currency TEXT NOT NULL,
                transactions BIGINT NOT NULL DEFAULT 0,
                gross BIGINT NOT NULL DEFAULT 0,
                proceeds BIGINT NOT NULL DEFAULT 0,
                refunded BIGINT NOT NULL DEFAULT 0,
                refunded_proceeds BIGINT NOT NULL DEFAULT 0,
                refunds BIGINT NOT NULL DEFAULT 0,
                refunds_developer_issue BIGINT NOT NULL DEFAULT 0,
                refunded_on_date BIGINT NOT NULL DEFAULT 0,
                refunded_on_date_developer_issue BIGINT NOT NULL DEFAULT 0,
                family_revocations BIGINT NOT NULL DEFAULT 0,
                active_paid_delta BIGINT NOT NULL DEFAULT 0,
                active_trial_delta BIGINT NOT NULL DEFAULT 0,
                active_family_delta BIGINT NOT NULL DEFAULT 0,
                mrr_gross_delta BIGINT NOT NULL DEFAULT 0,
                mrr_proceeds_delta BIGINT NOT NULL DEFAULT 0,
                new_customers BIGINT NOT NULL DEFAULT 0,
                trials_started BIGINT NOT NULL DEFAULT 0,
                trials_converted BIGINT NOT NULL DEFAULT 0,
                trials_pending BIGINT NOT NULL DEFAULT 0,
                trials_abandoned BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (app_id, environment, day, product_id, subscription_group, storefront, currency)
            );
            """,
        postgres: """
            CREATE TABLE analytics_settings (
                app_id TEXT PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
                settings_json TEXT NOT NULL,
                version BIGINT NOT NULL DEFAULT 1,
                updated_at BIGINT NOT NULL
            );
            CREATE TABLE analytics_contributions (
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                app_id TEXT NOT NULL,
                contribution_json TEXT NOT NULL,
                PRIMARY KEY (customer_id, environment)
            );
            CREATE INDEX analytics_contributions_app ON analytics_contributions (app_id, environment);
            CREATE TABLE analytics_daily (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                day BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                subscription_group TEXT NOT NULL,
                storefront TEXT NOT NULL,
                currency TEXT NOT NULL,
                transactions BIGINT NOT NULL DEFAULT 0,
                gross BIGINT NOT NULL DEFAULT 0,
                proceeds BIGINT NOT NULL DEFAULT 0,
                refunded BIGINT NOT NULL DEFAULT 0,
                refunded_proceeds BIGINT NOT NULL DEFAULT 0,
                refunds BIGINT NOT NULL DEFAULT 0,
                refunds_developer_issue BIGINT NOT NULL DEFAULT 0,
                refunded_on_date BIGINT NOT NULL DEFAULT 0,
                refunded_on_date_developer_issue BIGINT NOT NULL DEFAULT 0,
                family_revocations BIGINT NOT NULL DEFAULT 0,
                active_paid_delta BIGINT NOT NULL DEFAULT 0,
                active_trial_delta BIGINT NOT NULL DEFAULT 0,
                active_family_delta BIGINT NOT NULL DEFAULT 0,
                mrr_gross_delta BIGINT NOT NULL DEFAULT 0,
                mrr_proceeds_delta BIGINT NOT NULL DEFAULT 0,
                new_customers BIGINT NOT NULL DEFAULT 0,
                trials_started BIGINT NOT NULL DEFAULT 0,
                trials_converted BIGINT NOT NULL DEFAULT 0,
                trials_pending BIGINT NOT NULL DEFAULT 0,
                trials_abandoned BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (app_id, environment, day, product_id, subscription_group, storefront, currency)
            );
            """)
}
