extension Migration {
    /// `customer_states.info_digest`: the hex of the first 16 bytes of the SHA-256 of
    /// `info_json`, written with it, so that a read answers the CustomerInfo's ETag without
    /// hashing the body (a SHA-256 of 2–165 KB on every GET). `info_digest_version` is the row's
    /// `version` the digest was written with: a save by an instance older than this migration,
    /// still running beside a newer one, moves `version` and `info_json` but leaves the digest,
    /// and a read uses a digest only at its own version, so such a state is hashed on read
    /// rather than answered with another text's ETag (a wrong 304). NULL for rows written before
    /// this migration and for states saved without a digest: those are hashed on read.
    static let stateDigests = Migration(
        identifier: "0026_state_digests",
        sqlite: """
            ALTER TABLE customer_states ADD COLUMN info_digest TEXT;
            ALTER TABLE customer_states ADD COLUMN info_digest_version BIGINT;
            """,
        postgres: """
            ALTER TABLE customer_states ADD COLUMN info_digest TEXT, ADD COLUMN info_digest_version BIGINT;
            """)
}
