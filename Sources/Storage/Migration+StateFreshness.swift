extension Migration {
    /// `customer_states.valid_until`: the instant (epoch ms) until which the stored CustomerInfo
    /// is the answer without re-evaluation, so a read can return `info_json` as it is. Rows
    /// written before this migration get 0: they are re-evaluated on read until next written.
    static let stateFreshness = Migration(
        identifier: "0003_state_freshness",
        sqlite: """
            ALTER TABLE customer_states ADD COLUMN valid_until BIGINT NOT NULL DEFAULT 0;
            """,
        postgres: """
            ALTER TABLE customer_states ADD COLUMN valid_until BIGINT NOT NULL DEFAULT 0;
            """)
}
