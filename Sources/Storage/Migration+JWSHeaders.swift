extension Migration {
    /// A signed transaction's JWS header stored once: Apple puts its certificate chain in every
    /// JWS header (`x5c`), the same bytes for every transaction until a certificate is renewed,
    /// and it is most of the JWS (2.2 KB of the simulator's 3.4 KB; about 5 KB of the 6 KB of a
    /// production transaction). `jws_headers` holds each header once, keyed by the hex of its
    /// SHA-256; a `signed_transactions` row written from here on with such a header keeps the
    /// digest in `jws_header_digest` and only the rest (`payload.signature`) in `jws`, and reads
    /// join the two back into the exact text stored before. Rows written before (and rows whose
    /// JWS has a short header or none) keep the whole text in `jws` and a NULL digest: nothing
    /// is rewritten. Header rows are only added, never deleted: a fact refers to its header from
    /// the transaction that wrote both.
    static let jwsHeaders = Migration(
        identifier: "0029_jws_headers",
        sqlite: """
            CREATE TABLE jws_headers (
                digest TEXT PRIMARY KEY,
                header TEXT NOT NULL
            );
            ALTER TABLE signed_transactions ADD COLUMN jws_header_digest TEXT;
            """,
        postgres: """
            CREATE TABLE jws_headers (
                digest TEXT PRIMARY KEY,
                header TEXT NOT NULL
            );
            ALTER TABLE signed_transactions ADD COLUMN jws_header_digest TEXT;
            """)
}
