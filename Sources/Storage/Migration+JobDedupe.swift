extension Migration {
    /// A job's dedupe key is unique among unfinished jobs only. Before, the key stayed taken
    /// forever: the same offline purchase posted again after its `purchase_completion` job had
    /// finished was answered `"completion": "pending"` while no job existed to complete it. Now
    /// a finished (completed or failed) job frees its key, so the post queues a new job, which
    /// is what "pending" promises; two unfinished jobs with one key still cannot exist. The
    /// indexes keep their 0004 names, with the narrower predicate.
    static let jobDedupe = Migration(
        identifier: "0010_job_dedupe",
        sqlite: """
            DROP INDEX jobs_app_dedupe;
            DROP INDEX jobs_global_dedupe;
            CREATE UNIQUE INDEX jobs_app_dedupe ON jobs (app_id, dedupe_key)
                WHERE app_id IS NOT NULL AND completed_at IS NULL AND failed_at IS NULL;
            CREATE UNIQUE INDEX jobs_global_dedupe ON jobs (dedupe_key)
                WHERE app_id IS NULL AND completed_at IS NULL AND failed_at IS NULL;
            """,
        postgres: """
            DROP INDEX jobs_app_dedupe;
            DROP INDEX jobs_global_dedupe;
            CREATE UNIQUE INDEX jobs_app_dedupe ON jobs (app_id, dedupe_key)
                WHERE app_id IS NOT NULL AND completed_at IS NULL AND failed_at IS NULL;
            CREATE UNIQUE INDEX jobs_global_dedupe ON jobs (dedupe_key)
                WHERE app_id IS NULL AND completed_at IS NULL AND failed_at IS NULL;
            """)
}
