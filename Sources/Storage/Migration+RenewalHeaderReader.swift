extension Migration {
    /// PostgreSQL: `storekeeper_jws_header(digest)`, the header `renewalInfoConflict` joins back
    /// to a stored renewal info's JWS. A VOLATILE function sees the headers committed by the
    /// time it runs: under READ COMMITTED an upsert that waited for a conflicting row compares
    /// with that row as committed, while a subquery would read the headers of the statement's
    /// older snapshot, without a header the other writer stored new (after a certificate
    /// renewal) with that row. SQLite's one writer sees every header its transaction can name:
    /// nothing to do there.
    static let renewalHeaderReader = Migration(
        identifier: "0032_renewal_header_reader",
        sqlite: """
            SELECT 1;
            """,
        postgres: """
            CREATE OR REPLACE FUNCTION storekeeper_jws_header(wanted TEXT) RETURNS TEXT
                LANGUAGE sql VOLATILE STRICT
                AS $$ SELECT header FROM jws_headers WHERE digest = wanted $$;
            """)
}
