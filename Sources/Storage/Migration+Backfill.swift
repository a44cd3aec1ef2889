extension Migration {
    /// What `storekeeper backfill receipts` needs to resume (issue 12).
    ///
    /// `backfill_lines`: per app, the SHA-256 (hex) of each export line whose receipt was
    /// imported, written in the same transaction as the line's facts. A line found here is
    /// skipped on a later run, so an interrupted backfill resumes without importing anything
    /// twice. (0012 is another migration's number.)
    static let backfill = Migration(
        identifier: "0013_backfill",
        sqlite: """
            CREATE TABLE backfill_lines (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                line_digest TEXT NOT NULL,
                app_user_id TEXT NOT NULL,
                imported_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, line_digest)
            );
            """,
        postgres: """
            CREATE TABLE backfill_lines (
                app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                line_digest TEXT NOT NULL,
                app_user_id TEXT NOT NULL,
                imported_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, line_digest)
            );
            """)
}
