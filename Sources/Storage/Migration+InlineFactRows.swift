extension Migration {
    /// PostgreSQL: the signed payloads stored as they are. A notification's `signedPayload`
    /// (about 11.5 KB: three JWS, each with its certificate chain) was run through pglz on every
    /// insert and never got smaller (`pg_column_size` equal to its length): 0.3 ms of the
    /// insert's 0.35 ms. It is now moved out of line without a compression attempt (`STORAGE
    /// EXTERNAL`). A transaction's or renewal info's row (a 3 KB JWS, incompressible too, and its
    /// fact) went over the 2 KB at which PostgreSQL compresses and moves values out; with
    /// `toast_tuple_target` at a page's size it stays whole in its row (those inserts took
    /// 0.11–0.14 ms, now about 0.06). Customer states (updated in place) keep the default.
    /// `SET STORAGE` locks `notifications` exclusively for an instant: it comes last, and waits
    /// at most 5 s for running transactions (then the migration fails and changes nothing; the
    /// next start tries again) rather than queue every instance's statements behind it. SQLite
    /// keeps long values in overflow pages and has nothing to change.
    static let inlineFactRows = Migration(
        identifier: "0024_inline_fact_rows",
        sqlite: """
            -- Nothing: PostgreSQL storage parameters only.
            """,
        postgres: """
            SET LOCAL lock_timeout = '5s';
            ALTER TABLE signed_transactions SET (toast_tuple_target = 8160);
            ALTER TABLE signed_renewal_infos SET (toast_tuple_target = 8160);
            ALTER TABLE notifications ALTER COLUMN signed_payload SET STORAGE EXTERNAL;
            """)
}
