import Foundation

/// The embedded store: one SQLite file in WAL mode with `synchronous=FULL`, so a write that
/// returned is on disk and survives the process being killed at any instant.
///
/// One writer connection runs every `write` (SQLite allows one writer at a time, which also
/// serializes updates to a customer); a small pool of read-only connections runs `read`s
/// concurrently on WAL snapshots. Each connection has its own dispatch queue.
/// - Note: Thread-safe: all state is immutable or confined to the connections' queues.
public final class SQLiteStore: Store {
    public let engine = StoreEngine.sqlite
    public let path: String
    private let writer: ConnectionWorker
    private let readers: ConnectionPool
    private let checkpointer: SQLiteCheckpointer
    private let statementProfile: SQLiteStatementProfile?

    private init(
        path: String, writer: ConnectionWorker, readers: ConnectionPool, checkpointer: SQLiteCheckpointer,
        statementProfile: SQLiteStatementProfile?
    ) {
        self.path = path
        self.writer = writer
        self.readers = readers
        self.checkpointer = checkpointer
        self.statementProfile = statementProfile
    }

    /// Checkpoints of the write-ahead log since the store opened (`SQLiteCheckpointer`).
    var checkpointStatistics: SQLiteCheckpointer.Statistics { checkpointer.statistics }

    /// Opens (creating if needed) the database at `path` and applies pending migrations
    /// (with `migrate: false`, refuses a database that lacks some). Refuses a database migrated
    /// by a newer binary with `schemaTooNew`. `observer` hears of each migration applied.
    /// `statementProfile`: a file to which the time of every statement the writer and readers
    /// ran is written when the store closes (`SQLiteStatementProfile`; diagnostics, not for
    /// production traffic); checked writable here.
    public static func open(
        path: String, readerCount: Int = 4, busyTimeoutMilliseconds: Int32 = 5_000, migrate: Bool = true,
        observer: MigrationObserver = MigrationObserver(), statementProfile: String? = nil
    ) async throws -> SQLiteStore {
        try await open(
            path: path, readerCount: readerCount, busyTimeoutMilliseconds: busyTimeoutMilliseconds, migrate: migrate,
            observer: observer, checkpoints: SQLiteCheckpointer.Settings(), statementProfile: statementProfile)
    }

    static func open(
        path: String, readerCount: Int = 4, busyTimeoutMilliseconds: Int32 = 5_000, migrate: Bool = true,
        observer: MigrationObserver = MigrationObserver(), checkpoints: SQLiteCheckpointer.Settings,
        statementProfile profilePath: String? = nil
    ) async throws -> SQLiteStore {
        let profile = profilePath.map(SQLiteStatementProfile.init(path:))
        // Written empty now, so a path that cannot be written is refused before the server starts.
        try profile?.write()
        let checkpointer = SQLiteCheckpointer(
            path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, settings: checkpoints)
        let writer = ConnectionWorker(label: "storekeeper.sqlite.writer") { () throws(StoreError) in
            let connection = try SQLiteConnection(
                path: path, readOnly: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            connection.handOffCheckpoints(to: checkpointer)
            if let profile { connection.profileStatements(into: profile) }
            return connection
        }
        _ = try await writer.run { connection in
            try Migrator.migrate(connection, apply: migrate, observer: observer)
        }
        let readers = (0..<max(1, readerCount)).map { index in
            ConnectionWorker(label: "storekeeper.sqlite.reader.\(index)") { () throws(StoreError) in
                let connection = try SQLiteConnection(
                    path: path, readOnly: true, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
                if let profile { connection.profileStatements(into: profile) }
                return connection
            }
        }
        return SQLiteStore(
            path: path, writer: writer, readers: ConnectionPool(workers: readers), checkpointer: checkpointer,
            statementProfile: profile)
    }

    public func read<R: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> R) async throws -> R {
        try await readers.withWorker { worker in
            try await worker.run { connection in try Self.snapshot(connection, body) }
        }
    }

    public func readBlocking<R>(_ body: (any StoreReader) throws -> R) throws -> R {
        try readers.withWorkerBlocking { worker in
            try worker.runBlocking { connection in try Self.snapshot(connection, body) }
        }
    }

    public func write<R: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> R) async throws -> R {
        try await writer.run { connection in try Self.transaction(connection, body) }
    }

    /// A read transaction on a read-only connection: one WAL snapshot for the whole body.
    static func snapshot<R>(_ connection: any SQLConnection, _ body: (any StoreReader) throws -> R) throws -> R {
        try connection.transaction("BEGIN") { try body(SQLStoreTransaction(connection: connection)) }
    }

    static func transaction<R>(_ connection: any SQLConnection, _ body: (any StoreTransaction) throws -> R) throws -> R
    {
        try SQLStoreTransaction.run(on: connection, begin: "BEGIN IMMEDIATE", body)
    }

    /// `PRAGMA integrity_check` on the writer connection: `"ok"` or SQLite's list of problems.
    public func integrityCheck() async throws -> String {
        try await writer.run { connection in
            guard let sqlite = connection as? SQLiteConnection else { return "not SQLite" }
            return try sqlite.integrityCheck()
        }
    }

    public func close() async {
        await readers.close()
        await writer.close()
        await checkpointer.close()
        // Its file was written once at open: a failure now is one the open did not foresee.
        if let statementProfile {
            do {
                try statementProfile.write()
            } catch {
                FileHandle.standardError.write(Data("storekeeper: \(error)\n".utf8))
            }
        }
    }
}
