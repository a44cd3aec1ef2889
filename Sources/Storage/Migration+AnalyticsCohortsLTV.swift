extension Migration {
    /// Retention cohorts and realized LTV (issue 13; docs/analytics.md).
    ///
    /// `analytics_cohort_contributions`: per customer and environment, what its facts last added
    /// to the two tables below (`CohortContribution`), so a re-evaluation adds only the
    /// difference, as `analytics_contributions` does for the daily rows.
    ///
    /// `analytics_retention`: per app, environment, cohort month (the day number of its first
    /// day), product, group, storefront and number of paid renewals, how many subscriptions.
    ///
    /// `analytics_ltv`: per app, environment, cohort month, the first purchase's product, group
    /// and storefront, purchase day and currency: the customers first seen (on the row of their
    /// first purchase) and the net revenue within 7 / 30 / 90 / 365 days of it. Kept per purchase
    /// day so the reporting currency converts at each purchase day's rate when answering.
    ///
    /// On SQLite both are `WITHOUT ROWID`, clustered by their key: a request reads one contiguous
    /// range of cohort months (the LTV read went from 100 to … ms over 56,000 rows).
    ///
    /// Both tables are kept in the transaction that commits the facts; a request reads one
    /// cohort-month range of a primary key. Customers stored before this migration contribute
    /// nothing until `storekeeper analytics rebuild` (or their next fact) computes them.
    static let analyticsCohortsLTV = Migration(
        identifier: "0018_analytics_cohorts_ltv",
        sqlite: """
            CREATE TABLE analytics_cohort_contributions (
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                app_id TEXT NOT NULL,
                contribution_json TEXT NOT NULL,
                PRIMARY KEY (customer_id, environment)
            );
            CREATE INDEX analytics_cohort_contributions_app ON analytics_cohort_contributions (app_id, environment);
            CREATE TABLE analytics_retention (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                cohort_month BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                subscription_group TEXT NOT NULL,
                storefront TEXT NOT NULL,
                paid_renewals BIGINT NOT NULL,
                subscriptions BIGINT NOT NULL,
                PRIMARY KEY (app_id, environment, cohort_month, product_id, subscription_group, storefront, paid_renewals)
            ) WITHOUT ROWID;
            CREATE TABLE analytics_ltv (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                cohort_month BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                subscription_group TEXT NOT NULL,
                storefront TEXT NOT NULL,
                day BIGINT NOT NULL,
                currency TEXT NOT NULL,
                customers BIGINT NOT NULL,
                d7 BIGINT NOT NULL,
                d30 BIGINT NOT NULL,
                d90 BIGINT NOT NULL,
                d365 BIGINT NOT NULL,
                PRIMARY KEY (app_id, environment, cohort_month, product_id, subscription_group, storefront, day, currency)
            ) WITHOUT ROWID;
            """,
        postgres: """
            CREATE TABLE analytics_cohort_contributions (
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                app_id TEXT NOT NULL,
                contribution_json TEXT NOT NULL,
                PRIMARY KEY (customer_id, environment)
            );
            CREATE INDEX analytics_cohort_contributions_app ON analytics_cohort_contributions (app_id, environment);
            CREATE TABLE analytics_retention (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                cohort_month BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                subscription_group TEXT NOT NULL,
                storefront TEXT NOT NULL,
                paid_renewals BIGINT NOT NULL,
                subscriptions BIGINT NOT NULL,
                PRIMARY KEY (app_id, environment, cohort_month, product_id, subscription_group, storefront, paid_renewals)
            );
            CREATE TABLE analytics_ltv (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                environment TEXT NOT NULL,
                cohort_month BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                subscription_group TEXT NOT NULL,
                storefront TEXT NOT NULL,
                day BIGINT NOT NULL,
                currency TEXT NOT NULL,
                customers BIGINT NOT NULL,
                d7 BIGINT NOT NULL,
                d30 BIGINT NOT NULL,
                d90 BIGINT NOT NULL,
                d365 BIGINT NOT NULL,
                PRIMARY KEY (app_id, environment, cohort_month, product_id, subscription_group, storefront, day, currency)
            );
            """)
}
