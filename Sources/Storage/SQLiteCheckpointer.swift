import CSQLite
import Foundation
import Synchronization

/// Checkpoints the SQLite store's write-ahead log on a connection of its own, so the single
/// writer mostly does not: copying the log's pages into the database file and syncing it was
/// 15% of the writer's time in the POST profile, work SQLite's automatic checkpoint does on
/// the committing connection, between one group commit and the next.
///
/// After each commit SQLite tells the writer how many frames the log holds (`sqlite3_wal_hook`,
/// which also turns SQLite's own automatic checkpoint off). From `threshold` frames on (SQLite's
/// default, 1,000) a passive checkpoint is asked of this connection, one at a time: it copies
/// what is committed without blocking the writer or readers, then syncs the database file.
///
/// SQLite starts the log over only when a checkpoint has copied all of it by the time the writer
/// begins a transaction. Under a steady stream of group commits the writer is nearly always in
/// one, so the log keeps growing however fast the copies are; at `writerLimit` frames the
/// writer checkpoints itself, as SQLite's automatic checkpoint does, copying the few frames left
/// and syncing, and the log starts over. Durability is SQLite's either way: a frame is reused
/// only after a checkpoint that reached the end of the log synced the database file.
/// - Note: Thread-safe: its state sits behind a `Mutex`; SQLite calls the hook on the writer's
///   queue, and checkpoints run on this object's own `ConnectionWorker`.
final class SQLiteCheckpointer: Sendable {
    /// When checkpoints are asked for.
    /// - Note: Immutable value; `Sendable`.
    struct Settings: Sendable, Hashable {
        var threshold: Int32 = 1_000
        /// 4,000 frames: a 16 MB log at most (4 KiB pages).
        var writerLimit: Int32 = 4_000
    }

    /// Checkpoints run since the store opened.
    /// - Note: Immutable value; `Sendable`.
    struct Statistics: Sendable, Hashable {
        /// By this connection.
        var background = 0
        /// By the writer, past `writerLimit`.
        var onWriter = 0
        /// Asked while another connection was checkpointing (nothing to do: the next commit
        /// asks again).
        var busy = 0
        /// Failed otherwise (an I/O error, the connection could not open).
        var failures = 0
    }

    private struct State {
        var running: Task<Void, Never>?
        var closed = false
        var statistics = Statistics()
    }

    let settings: Settings
    private let worker: ConnectionWorker
    private let state = Mutex(State())

    init(path: String, busyTimeoutMilliseconds: Int32, settings: Settings) {
        self.settings = settings
        worker = ConnectionWorker(label: "storekeeper.sqlite.checkpointer") { () throws(StoreError) in
            try SQLiteConnection(
                path: path, readOnly: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds, cacheKiB: 1_024,
                existing: true)
        }
    }

    var statistics: Statistics { state.withLock { $0.statistics } }

    /// Called by SQLite on the writer's queue after each commit, with the frames in the log.
    func committed(frames: Int32, writer: OpaquePointer) {
        if frames >= settings.writerLimit {
            let status = sqlite3_wal_checkpoint_v2(writer, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            state.withLock { state in
                switch status {
                case SQLITE_OK: state.statistics.onWriter += 1
                case SQLITE_BUSY: state.statistics.busy += 1
                default: state.statistics.failures += 1
                }
            }
            return
        }
        guard frames >= settings.threshold else { return }
        state.withLock { state in
            guard state.running == nil, !state.closed else { return }
            state.running = Task.detached { [self] in await checkpointInBackground() }
        }
    }

    private func checkpointInBackground() async {
        var outcome: Bool?
        do {
            outcome = try await worker.run { connection in
                let sqlite = connection as! SQLiteConnection
                guard try sqlite.checkpoint() else { return false }
                // SQLite syncs the database file only after a copy that reached the log's end,
                // which under steady writes is the writer's own; synced here, off its thread, the
                // pages copied so far leave that sync little to write.
                sqlite.syncDatabaseFile()
                return true
            }
        } catch {
            outcome = nil
        }
        state.withLock { state in
            switch outcome {
            case true: state.statistics.background += 1
            case false: state.statistics.busy += 1
            case nil: state.statistics.failures += 1
            }
            state.running = nil
        }
    }

    /// Waits for a checkpoint in flight, then closes the connection; asks after this are
    /// ignored.
    func close() async {
        let running = state.withLock { state in
            state.closed = true
            return state.running
        }
        await running?.value
        await worker.close()
    }
}
