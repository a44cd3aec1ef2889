extension Migration {
    /// Exact Play revenue from the orders API (issue 15).
    ///
    /// `play_app_settings.read_order_revenue`: the per-app switch (off by default): when on,
    /// each new order of a purchase or renewal read is read with `orders.get`.
    ///
    /// `play_orders`: one row per (app, order id): the order's answer verbatim (`raw_json`), the
    /// decoded `PlayOrderFact` (`fact_json`, holding the developer revenue), the token it belongs
    /// to (a customer's facts are found through it) and the read instant; a later read of the
    /// order replaces the row.
    static let playOrderRevenue = Migration(
        identifier: "0021_play_order_revenue",
        sqlite: """
            ALTER TABLE play_app_settings ADD COLUMN read_order_revenue INTEGER NOT NULL DEFAULT 0;
            CREATE TABLE play_orders (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                order_id TEXT NOT NULL,
                purchase_token TEXT NOT NULL,
                environment TEXT NOT NULL,
                read_at BIGINT NOT NULL,
                raw_json TEXT NOT NULL,
                fact_json TEXT NOT NULL,
                source TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                UNIQUE (app_id, order_id)
            );
            CREATE INDEX play_orders_token ON play_orders (app_id, purchase_token);
            """,
        postgres: """
            ALTER TABLE play_app_settings ADD COLUMN read_order_revenue INTEGER NOT NULL DEFAULT 0;
            CREATE TABLE play_orders (
                id BIGSERIAL PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                order_id TEXT NOT NULL,
                purchase_token TEXT NOT NULL,
                environment TEXT NOT NULL,
                read_at BIGINT NOT NULL,
                raw_json TEXT NOT NULL,
                fact_json TEXT NOT NULL,
                source TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                UNIQUE (app_id, order_id)
            );
            CREATE INDEX play_orders_token ON play_orders (app_id, purchase_token);
            """)
}
