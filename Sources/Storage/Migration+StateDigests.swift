extension Migration {
    /// `customer_states.info_digest`: the hex of the first 16 bytes of the SHA-256 of
    /// `info_json`, written with it, so that a read answers the CustomerInfo's ETag without
    /// hashing the body (a SHA-256 of 2–165 KB on every GET). NULL for rows written before this
    /// migration and for states saved without one: those are hashed on read, as before.
    static let stateDigests = Migration(
        identifier: "0026_state_digests",
        sqlite: """
            ALTER TABLE customer_states ADD COLUMN info_digest TEXT;
            """,
        postgres: """
            ALTER TABLE customer_states ADD COLUMN info_digest TEXT;
            """)
}
