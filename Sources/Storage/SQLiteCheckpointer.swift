import CSQLite
import Synchronization

/// Checkpoints the SQLite store's write-ahead log on a connection of its own, so the single
/// writer does not: copying the log's pages into the database file and syncing it was 15% of
/// the writer's time in the POST profile, work SQLite's automatic checkpoint does on the
/// committing connection, between one group commit and the next.
///
/// After each commit SQLite tells the writer how many frames the log holds (`sqlite3_wal_hook`,
/// which also turns SQLite's own automatic checkpoint off). From `threshold` frames on (SQLite's
/// default, 1,000) a passive checkpoint is asked of this connection, one at a time; it copies
/// what is committed without blocking the writer or readers and syncs the database file before
/// the log may be reused, as SQLite's own does (`synchronous=FULL` on this connection too). The
/// writer starts the log over at its next transaction once a checkpoint caught up. Should the
/// log reach `writerLimit` frames all the same (this connection cannot keep up), the writer
/// checkpoints itself, as before, so the log stays bounded.
/// - Note: Thread-safe: the queue and counters are behind `Atomic`s; SQLite calls the hook on
///   the writer's queue, and checkpoints run on this object's own `ConnectionWorker`.
final class SQLiteCheckpointer: Sendable {
    /// When checkpoints are asked for.
    /// - Note: Immutable value; `Sendable`.
    struct Settings: Sendable, Hashable {
        var threshold: Int32 = 1_000
        var writerLimit: Int32 = 10_000
    }

    /// Checkpoints run since the store opened.
    /// - Note: Immutable value; `Sendable`.
    struct Statistics: Sendable, Hashable {
        /// By this connection.
        var background: Int
        /// By the writer, past `writerLimit`.
        var onWriter: Int
        /// Background checkpoints that failed (the next commit asks again).
        var failures: Int
    }

    let settings: Settings
    private let worker: ConnectionWorker
    private let pending = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)
    private let background = Atomic<Int>(0)
    private let onWriter = Atomic<Int>(0)
    private let failures = Atomic<Int>(0)

    init(path: String, busyTimeoutMilliseconds: Int32, settings: Settings) {
        self.settings = settings
        worker = ConnectionWorker(label: "storekeeper.sqlite.checkpointer") { () throws(StoreError) in
            try SQLiteConnection(
                path: path, readOnly: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds, cacheKiB: 1_024)
        }
    }

    var statistics: Statistics {
        Statistics(
            background: background.load(ordering: .relaxed), onWriter: onWriter.load(ordering: .relaxed),
            failures: failures.load(ordering: .relaxed))
    }

    /// Called by SQLite on the writer's queue after each commit, with the frames in the log.
    func committed(frames: Int32, writer: OpaquePointer) {
        if frames >= settings.writerLimit {
            if sqlite3_wal_checkpoint_v2(writer, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_OK {
                onWriter.add(1, ordering: .relaxed)
            }
            return
        }
        guard frames >= settings.threshold,
            pending.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        Task.detached { [self] in
            defer { pending.store(false, ordering: .releasing) }
            guard !closed.load(ordering: .acquiring) else { return }
            do {
                try await worker.run { connection in try (connection as! SQLiteConnection).checkpoint() }
                background.add(1, ordering: .relaxed)
            } catch {
                failures.add(1, ordering: .relaxed)
            }
        }
    }

    /// Waits for a checkpoint in flight, then closes the connection; asks after this are
    /// ignored (the writer is closed first, so none come).
    func close() async {
        closed.store(true, ordering: .releasing)
        while pending.load(ordering: .acquiring) {
            try? await Task.sleep(for: .milliseconds(1))
        }
        await worker.close()
    }
}
