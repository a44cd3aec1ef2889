extension Migration {
    /// A renewal info's JWS header is kept once too, as `0029_jws_headers` does for
    /// transactions: the row holds the digest in `jws_header_digest` and the rest in `jws`.
    /// Rows stored before are kept whole, with a NULL digest. Of two renewal infos signed at one
    /// instant the kept one is still the greater by whole JWS text (`renewalInfoConflict` joins
    /// the header back to compare).
    static let renewalJWSHeaders = Migration(
        identifier: "0031_renewal_jws_headers",
        sqlite: """
            ALTER TABLE signed_renewal_infos ADD COLUMN jws_header_digest TEXT;
            """,
        postgres: """
            ALTER TABLE signed_renewal_infos ADD COLUMN jws_header_digest TEXT;
            """)
}
