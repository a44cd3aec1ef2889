extension Migration {
    /// The analytics figures 0012 could not serve (issue 13): churn, MRR movement, refund
    /// reversals and refund requests, and figures at an instant inside a day.
    ///
    /// `analytics_daily` gains one column per new `AnalyticsMeasures` field (0 for the rows and
    /// contributions already stored: `storekeeper analytics rebuild` computes them).
    ///
    /// `analytics_periods`: per customer and environment, each active subscription period
    /// (`AnalyticsPeriod`) to the millisecond with its MRR; the period that ends a paid run
    /// carries the run's start, the next run's start and the churn reason. Kept in the
    /// transaction that commits the facts, beside the contributions. Read by end instant (the
    /// index): the periods active now, and the runs that ended in a range.
    static let analyticsCohorts = Migration(
        identifier: "0015_analytics_cohorts",
        sqlite: """
            ALTER TABLE analytics_daily ADD COLUMN paid_runs_active_delta BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN mrr_new BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN mrr_expansion BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN mrr_contraction BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN mrr_churned BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN mrr_reactivation BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN refund_reversals BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN consumption_requests BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN consumption_requests_granted BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN consumption_requests_declined BIGINT NOT NULL DEFAULT 0;
            CREATE TABLE analytics_periods (
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                app_id TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                subscription TEXT NOT NULL,
                product_id TEXT NOT NULL,
                subscription_group TEXT NOT NULL,
                storefront TEXT NOT NULL,
                currency TEXT NOT NULL,
                activity TEXT NOT NULL,
                start_at BIGINT NOT NULL,
                end_at BIGINT NOT NULL,
                mrr_gross BIGINT NOT NULL,
                mrr_proceeds BIGINT NOT NULL,
                run_start_at BIGINT,
                next_run_start_at BIGINT,
                churn_reason TEXT,
                PRIMARY KEY (customer_id, environment, transaction_id)
            );
            CREATE INDEX analytics_periods_end ON analytics_periods (app_id, environment, end_at);
            """,
        postgres: """
            ALTER TABLE analytics_daily ADD COLUMN paid_runs_active_delta BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN mrr_new BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN mrr_expansion BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN mrr_contraction BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN mrr_churned BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN mrr_reactivation BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN refund_reversals BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN consumption_requests BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN consumption_requests_granted BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE analytics_daily ADD COLUMN consumption_requests_declined BIGINT NOT NULL DEFAULT 0;
            CREATE TABLE analytics_periods (
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                app_id TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                subscription TEXT NOT NULL,
                product_id TEXT NOT NULL,
                subscription_group TEXT NOT NULL,
                storefront TEXT NOT NULL,
                currency TEXT NOT NULL,
                activity TEXT NOT NULL,
                start_at BIGINT NOT NULL,
                end_at BIGINT NOT NULL,
                mrr_gross BIGINT NOT NULL,
                mrr_proceeds BIGINT NOT NULL,
                run_start_at BIGINT,
                next_run_start_at BIGINT,
                churn_reason TEXT,
                PRIMARY KEY (customer_id, environment, transaction_id)
            );
            CREATE INDEX analytics_periods_end ON analytics_periods (app_id, environment, end_at);
            """)
}
