extension Migration {
    /// Google Play in analytics (issue 15): every aggregate row and period says which store it
    /// comes from, so each figure is served per store as well as combined.
    ///
    /// `analytics_daily` gains `store` (`appStore` for the rows already stored: before this,
    /// only App Store facts were rolled up) in its primary key, and `refunds_partial` (0 until
    /// `storekeeper analytics rebuild` computes it). SQLite cannot change a primary key in
    /// place, so the table is rebuilt with the columns it had after 0015; PostgreSQL swaps the
    /// key. `analytics_periods` gains `store` (its key, the customer's order or transaction id,
    /// is already unique across stores). The contributions need nothing: their JSON keys read
    /// an absent store as the App Store.
    static let analyticsStore = Migration(
        identifier: "0016_analytics_store",
        sqlite: """
            ALTER TABLE analytics_daily RENAME TO analytics_daily_before_0016;
            CREATE TABLE analytics_daily (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                day BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                subscription_group TEXT NOT NULL,
                storefront TEXT NOT NULL,
                currency TEXT NOT NULL,
                store TEXT NOT NULL DEFAULT 'appStore',
                \(measureColumnsAfter0015),
                refunds_partial BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (app_id, environment, day, product_id, subscription_group, storefront, currency, store)
            );
            INSERT INTO analytics_daily (app_id, environment, day, product_id, subscription_group, storefront,
                                         currency, \(measureNamesAfter0015))
            SELECT app_id, environment, day, product_id, subscription_group, storefront, currency,
                   \(measureNamesAfter0015)
            FROM analytics_daily_before_0016;
            DROP TABLE analytics_daily_before_0016;
            ALTER TABLE analytics_periods ADD COLUMN store TEXT NOT NULL DEFAULT 'appStore';
            """,
        postgres: """
            ALTER TABLE analytics_daily ADD COLUMN store TEXT NOT NULL DEFAULT 'appStore';
            ALTER TABLE analytics_daily ADD COLUMN refunds_partial BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily DROP CONSTRAINT analytics_daily_pkey;
            ALTER TABLE analytics_daily
                ADD PRIMARY KEY (app_id, environment, day, product_id, subscription_group, storefront, currency, store);
            ALTER TABLE analytics_periods ADD COLUMN store TEXT NOT NULL DEFAULT 'appStore';
            """)

    /// The measure columns of `analytics_daily` after 0015, spelled out: a migration is literal
    /// SQL and never changes, so it must not follow `AnalyticsMeasures.columns`.
    private static let measureNamesAfter0015 = """
        transactions, gross, proceeds, refunded, refunded_proceeds, refunds, refunds_developer_issue, \
        refunded_on_date, refunded_on_date_developer_issue, family_revocations, active_paid_delta, \
        active_trial_delta, active_family_delta, mrr_gross_delta, mrr_proceeds_delta, new_customers, \
        trials_started, trials_converted, trials_pending, trials_abandoned, paid_runs_active_delta, mrr_new, \
        mrr_expansion, mrr_contraction, mrr_churned, mrr_reactivation, refund_reversals, consumption_requests, \
        consumption_requests_granted, consumption_requests_declined
        """

    private static let measureColumnsAfter0015 = measureNamesAfter0015.split(separator: ",").map {
        "\($0.filter { $0 != " " && $0 != "\n" }) BIGINT NOT NULL DEFAULT 0"
    }.joined(separator: ",\n    ")
}
