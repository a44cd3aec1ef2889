extension Migration {
    /// A renewal info's JWS header is kept once too, as `0029_jws_headers` does for
    /// transactions: the row holds the digest in `jws_header_digest` and the rest in `jws`.
    /// Rows stored before are kept whole, with a NULL digest. Of two renewal infos signed at one
    /// instant the kept one is still the greater by whole JWS text (`renewalInfoConflict` joins
    /// the header back to compare).
    ///
    /// On PostgreSQL the header is read back through `storekeeper_jws_header`, a VOLATILE
    /// function: each call sees the headers committed by then. Under READ COMMITTED an upsert
    /// that waited for a conflicting row compares with that row as committed, while a subquery
    /// would read the headers of the statement's older snapshot, without a header that the same
    /// writer stored new (after a certificate renewal) and committed meanwhile.
    static let renewalJWSHeaders = Migration(
        identifier: "0031_renewal_jws_headers",
        sqlite: """
            ALTER TABLE signed_renewal_infos ADD COLUMN jws_header_digest TEXT;
            """,
        postgres: """
            ALTER TABLE signed_renewal_infos ADD COLUMN jws_header_digest TEXT;
            CREATE FUNCTION storekeeper_jws_header(wanted TEXT) RETURNS TEXT
                LANGUAGE sql VOLATILE STRICT
                AS $$ SELECT header FROM jws_headers WHERE digest = wanted $$;
            """)
}
