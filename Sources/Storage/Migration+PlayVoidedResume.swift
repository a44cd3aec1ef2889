extension Migration {
    /// Voided-purchases polling resumes where a run stopped (issue 15): a window longer than one
    /// run's pages kept being listed from its first page and never completed.
    ///
    /// `play_voided_cursors` gains the window a run is listing (`window_start`, `window_end`,
    /// epoch ms) and Google's `nextPageToken` of the next page to list (`page_token`), saved with
    /// the lease after each committed page; all three are NULL when no window is open. The next
    /// run, on any instance, asks for the same window from that page.
    static let playVoidedResume = Migration(
        identifier: "0019_play_voided_resume",
        sqlite: sql,
        postgres: sql)

    private static let sql = """
        ALTER TABLE play_voided_cursors ADD COLUMN window_start BIGINT;
        ALTER TABLE play_voided_cursors ADD COLUMN window_end BIGINT;
        ALTER TABLE play_voided_cursors ADD COLUMN page_token TEXT;
        """
}
