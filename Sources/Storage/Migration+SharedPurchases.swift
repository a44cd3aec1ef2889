extension Migration {
    /// The `share` transfer policy: a purchase stays with its owner and also serves other app
    /// user ids, whose facts then include it.
    static let sharedPurchases = Migration(
        identifier: "0002_shared_purchases",
        sqlite: """
            CREATE TABLE customer_shared_transactions (
                app_id TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                shared_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, original_transaction_id, customer_id)
            );
            CREATE INDEX customer_shared_transactions_customer ON customer_shared_transactions (customer_id);
            """,
        postgres: """
            CREATE TABLE customer_shared_transactions (
                app_id TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
                shared_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, original_transaction_id, customer_id)
            );
            CREATE INDEX customer_shared_transactions_customer ON customer_shared_transactions (customer_id);
            """)
}
