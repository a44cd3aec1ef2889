import CSQLite

/// One libsqlite3 connection with a cache of prepared statements.
///
/// Opened with `SQLITE_OPEN_NOMUTEX`: SQLite does no locking of its own because the
/// connection is confined to one `ConnectionWorker` queue.
/// - Note: Not thread-safe; used only on its worker's queue.
final class SQLiteConnection: SQLConnection {
    let dialect = SQLDialect.sqlite
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    /// Kept alive while SQLite's log hook points at it (`handOffCheckpoints`).
    private var checkpointer: SQLiteCheckpointer?
    /// Kept alive while SQLite's trace hook points at it (`profileStatements`).
    private var statementProfile: SQLiteStatementProfile?
    /// Whether the schema has `purchase_fact_stamps`, looked up at the first transaction that
    /// asks: after the store's migrations, so that one on an older schema (a migration's test,
    /// a store opened without migrating) writes as before.
    private var factStampsKnown: Bool?
    var keepsFactStamps: Bool {
        if let factStampsKnown { return factStampsKnown }
        let found =
            (try? query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'purchase_fact_stamps'", []))?
            .isEmpty == false
        factStampsKnown = found
        return found
    }
    func forgetSchema() { factStampsKnown = nil }
    /// Statements kept prepared (tests: texts built from a request must stay few).
    var preparedStatementCount: Int { statements.count }

    /// Opens `path`; the writer creates the file, puts it in WAL mode and sets
    /// `synchronous=FULL`, so a commit is on disk before `COMMIT` returns.
    /// `cacheKiB`: the page cache (default 64 MiB for a writer, 16 MiB for a reader).
    /// `existing`: a read-write connection to a file the writer made (the checkpointer's),
    /// neither created nor switched to WAL here.
    init(
        path: String, readOnly: Bool, busyTimeoutMilliseconds: Int32, cacheKiB: Int? = nil, existing: Bool = false
    ) throws(StoreError) {
        _ = Self.processSettings
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        flags |=
            readOnly
            ? SQLITE_OPEN_READONLY : (existing ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        var db: OpaquePointer?
        let status = sqlite3_open_v2(path, &db, flags, nil)
        handle = db
        guard status == SQLITE_OK, db != nil else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            handle = nil
            throw StoreError(.invalidConfiguration, "cannot open SQLite database: \(message)")
        }
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        if !readOnly, !existing {
            // Switching a new file to WAL needs its exclusive lock. When another connection opens
            // the same file at that moment, SQLite answers busy at once rather than call the busy
            // handler (waiting could deadlock), so the switch is retried within the busy timeout.
            var waited: Int32 = 0
            var mode: String?
            while true {
                do {
                    mode = try query("PRAGMA journal_mode = WAL", []).first.flatMap { try? $0.text(0) }
                    break
                } catch  where error.code == .timeout && waited < busyTimeoutMilliseconds {
                    sqlite3_sleep(5)
                    waited += 5
                }
            }
            guard mode?.lowercased() == "wal" else {
                throw StoreError(.invalidConfiguration, "SQLite database refused WAL mode")
            }
        }
        // A page cache of 64 MiB for the writer and 16 MiB per reader (SQLite's default is 2 MiB):
        // with 10,000 customers (a 230 MB file) nearly every page an ingestion touched was read
        // again from the file, `pread` calls on the single writer's thread (issue 10's profile).
        // `secure_delete = FAST`: Debian builds SQLite to zero every freed page, so rewriting a
        // long history's 150 KB state logged its 37 old overflow pages as zeros besides the new
        // ones (110 pages a commit, 75 without). FAST still clears deleted content inside the
        // b-tree pages a change writes anyway; a freed overflow page keeps its old bytes until
        // it is reused, as it would with SQLite's own default (off).
        try executeScript(
            """
            PRAGMA synchronous = FULL;
            PRAGMA foreign_keys = ON;
            PRAGMA secure_delete = FAST;
            PRAGMA cache_size = \(-(cacheKiB ?? (readOnly ? 16_384 : 65_536)));
            """)
    }

    deinit { close() }

    /// Hands this (writer) connection's checkpoints to `checkpointer`: SQLite calls it after each
    /// commit instead of checkpointing here (`sqlite3_wal_hook` replaces the automatic
    /// checkpoint). The connection keeps `checkpointer` alive.
    func handOffCheckpoints(to checkpointer: SQLiteCheckpointer) {
        guard let handle else { return }
        self.checkpointer = checkpointer
        let hook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
            context, db, _, frames in
            guard let context, let db else { return SQLITE_OK }
            Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(
                frames: frames, writer: db)
            return SQLITE_OK
        }
        sqlite3_wal_hook(handle, hook, Unmanaged.passUnretained(checkpointer).toOpaque())
    }

    /// Adds the time of every statement this connection runs from now on to `profile`
    /// (`sqlite3_trace_v2`: a statement's start and end). The connection keeps `profile` alive.
    func profileStatements(into profile: SQLiteStatementProfile) {
        guard let handle else { return }
        statementProfile = profile
        let hook:
            @convention(c) (UInt32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?)
                -> Int32 = { event, context, statement, detail in
                    guard let context, let statement else { return 0 }
                    let profile = Unmanaged<SQLiteStatementProfile>.fromOpaque(context).takeUnretainedValue()
                    if event == UInt32(SQLITE_TRACE_STMT) {
                        profile.began(statement: OpaquePointer(statement))
                    } else if event == UInt32(SQLITE_TRACE_PROFILE), let detail {
                        profile.ended(
                            statement: OpaquePointer(statement), sqliteNanoseconds: detail.load(as: Int64.self))
                    }
                    return 0
                }
        sqlite3_trace_v2(
            handle, UInt32(SQLITE_TRACE_STMT | SQLITE_TRACE_PROFILE), hook, Unmanaged.passUnretained(profile).toOpaque()
        )
    }

    /// Syncs the database file through SQLite's own descriptor of it. Never through another
    /// one: closing any descriptor of a file drops every POSIX lock the process holds on it,
    /// SQLite's included, and another process could then take the file as its own.
    func syncDatabaseFile() {
        guard let handle else { return }
        var file: UnsafeMutablePointer<sqlite3_file>?
        let status = withUnsafeMutablePointer(to: &file) {
            sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, $0)
        }
        guard status == SQLITE_OK, let file, let sync = file.pointee.pMethods?.pointee.xSync else { return }
        _ = sync(file, SQLITE_SYNC_NORMAL)
    }

    /// A passive checkpoint of the log: copies what is committed without waiting for the
    /// writer or readers. `false` when another connection was checkpointing (`SQLITE_BUSY`).
    func checkpoint() throws(StoreError) -> Bool {
        guard let handle else { throw StoreError(.closed, "SQLite connection is closed") }
        let status = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        if status == SQLITE_BUSY { return false }
        guard status == SQLITE_OK else { throw error(status, "PRAGMA wal_checkpoint(PASSIVE)") }
        return true
    }

    /// Set once per process, before the first connection opens:
    /// - SQLite's memory statistics off. Their mutex is taken by every allocation of every
    ///   connection, and GETs read on two threads at once (the GET profile's futex waits).
    ///   Nothing here reads those statistics.
    /// - A savepoint's statement journal kept in memory up to `statementJournalSpill` bytes
    ///   (SQLite's default is 64 KiB). A savepoint journals each existing page it changes
    ///   (~25 pages, 100 KB for a notification's ingestion, when a group is written in
    ///   savepoints); past 64 KiB that went to a temporary file, half the bytes the writer's
    ///   thread wrote with `pwrite` when every ingestion had its savepoint. A larger journal
    ///   still spills, so a big statement's memory stays bounded.
    private static let processSettings: (memoryStatistics: Int32, statementJournal: Int32) = (
        CSQLite_disableMemoryStatistics(), CSQLite_statementJournalSpill(statementJournalSpill)
    )

    /// The statement journal's in-memory bound: the most SQLite's unix VFS writes in one call
    /// (it masks a write's length to 17 bits), since the spill writes the journal at once. With
    /// a larger bound the spill failed with "database or disk is full" (SQLite 3.40).
    static let statementJournalSpill: Int32 = (1 << 17) - 1

    /// What the settings answered (`SQLITE_OK`, or `SQLITE_MISUSE` when something in the
    /// process had initialized SQLite first), and the bytes the statistics count (zero while
    /// off): tests.
    static var memoryStatisticsSetting: Int32 { processSettings.memoryStatistics }
    static var statementJournalSetting: Int32 { processSettings.statementJournal }
    static var trackedMemory: Int64 { sqlite3_memory_used() }

    /// Between `begin` and `commit`/`rollback`. SQLite ends a transaction on its own after some
    /// I/O and memory errors and then runs each later statement as a transaction of its own (a
    /// `SAVEPOINT` starts one, its `RELEASE` commits it): while this is set, `query` and
    /// `executeScript` refuse to run once that happened, whoever issues the statement.
    private var transactionBegun = false

    var isHealthy: Bool { handle != nil }
    var inTransaction: Bool { handle.map { sqlite3_get_autocommit($0) == 0 } ?? false }

    func close() {
        for statement in statements.values {
            statementProfile?.forget(statement: statement)
            sqlite3_finalize(statement)
        }
        statements = [:]
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    func query(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> [SQLRow] {
        var rows: [SQLRow] = []
        try scan(sql, arguments) { row in rows.append(row.copied()) }
        return rows
    }

    func scan(_ sql: String, _ arguments: [SQLValue], _ body: (SQLRowView) throws(StoreError) -> Void)
        throws(StoreError)
    {
        try requireBegunTransaction(sql)
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        try bind(arguments, to: statement)
        let row = SQLRowView(source: .sqlite(statement))
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw error(status, sql) }
            try body(row)
        }
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> Int {
        try scan(sql, arguments) { _ in }
        return Int(sqlite3_changes64(handle))
    }

    func begin(_ statement: String) throws(StoreError) {
        // What an earlier caller left open (a flag, a transaction) must not refuse this BEGIN
        // and every later one on this connection.
        if transactionBegun || inTransaction { rollback() }
        // Prepared once per connection (`execute`), not parsed by `sqlite3_exec` on every read.
        try execute(statement, [])
        transactionBegun = true
    }

    func commit() throws(StoreError) {
        try execute("COMMIT", [])
        transactionBegun = false
    }

    func rollback() {
        transactionBegun = false
        guard let handle, sqlite3_get_autocommit(handle) == 0 else { return }
        try? executeScript("ROLLBACK")
        // Still inside a transaction: every later BEGIN would fail on this connection, so it is
        // closed and its worker opens a fresh one (closing rolls the transaction back).
        if sqlite3_get_autocommit(handle) == 0 { close() }
    }

    /// Throws when a transaction was begun and the database has since ended it.
    private func requireBegunTransaction(_ sql: String) throws(StoreError) {
        guard transactionBegun, let handle, sqlite3_get_autocommit(handle) != 0 else { return }
        throw StoreError.transactionEnded(refusing: Self.summary(of: sql))
    }

    func executeScript(_ sql: String) throws(StoreError) {
        guard let handle else { throw StoreError(.closed, "SQLite connection is closed") }
        try requireBegunTransaction(sql)
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        if let message { sqlite3_free(message) }
        guard status == SQLITE_OK else { throw error(status, sql) }
    }

    /// `PRAGMA integrity_check`: "ok" or the list of problems.
    func integrityCheck() throws(StoreError) -> String {
        try query("PRAGMA integrity_check", []).map { row throws(StoreError) in try row.text(0) }.joined(
            separator: "\n")
    }

    // MARK: - Internals

    /// Shared statements are written with PostgreSQL's `$1` placeholders; SQLite reads `?1`
    /// as the same numbered parameter, and a plain `?` as the next one. When the placeholders
    /// appear exactly as `$1`, `$2`, … `$n` in order, each becomes `?`: SQLite names every
    /// numbered parameter in the compiled statement by a linear search of its parameter list,
    /// so preparing a multi-row insert of thousands of `?N` cost time in the square of their
    /// number (6,000 parameters: ~150 ms on the first re-evaluation of a long history).
    static func sqliteText(_ sql: String) -> String {
        let bytes = Array(sql.utf8)
        var placeholders: [(start: Int, end: Int, number: Int)] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "$"), index + 1 < bytes.count, Self.isDigit(bytes[index + 1]) {
                var end = index + 1
                var number = 0
                while end < bytes.count, Self.isDigit(bytes[end]) {
                    number = min(number * 10 + Int(bytes[end] - UInt8(ascii: "0")), Int(Int32.max))
                    end += 1
                }
                placeholders.append((index, end, number))
                index = end
            } else {
                index += 1
            }
        }
        guard !placeholders.isEmpty else { return sql }
        let inOrder = placeholders.indices.allSatisfy { placeholders[$0].number == $0 + 1 }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var copied = 0
        for placeholder in placeholders {
            result += bytes[copied..<placeholder.start]
            result.append(UInt8(ascii: "?"))
            if !inOrder { result += bytes[(placeholder.start + 1)..<placeholder.end] }
            copied = placeholder.end
        }
        result += bytes[copied...]
        return String(decoding: result, as: UTF8.self)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private func prepared(_ sql: String) throws(StoreError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        guard let handle else { throw StoreError(.closed, "SQLite connection is closed") }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(
            handle, Self.sqliteText(sql), -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status, sql) }
        statements[sql] = statement
        statementProfile?.register(statement: statement)
        return statement
    }

    private func bind(_ arguments: [SQLValue], to statement: OpaquePointer) throws(StoreError) {
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch argument {
            case .null: status = sqlite3_bind_null(statement, index)
            case .integer(let value): status = sqlite3_bind_int64(statement, index, value)
            case .text(let value):
                // With the length given, SQLite copies the bytes as they are (no strlen).
                status = try SQLValue.withStorableUTF8(value) { bytes in
                    guard let base = bytes.baseAddress, !bytes.isEmpty else {
                        // An empty text needs a pointer all the same: a null one binds NULL.
                        return sqlite3_bind_text(statement, index, "", 0, CSQLite_transient())
                    }
                    return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { text in
                        sqlite3_bind_text64(
                            statement, index, text, sqlite3_uint64(bytes.count), CSQLite_transient(),
                            UInt8(SQLITE_UTF8))
                    }
                }
            }
            guard status == SQLITE_OK else { throw error(status, "bind") }
        }
    }

    /// Maps a result code; the message is SQLite's, which names tables and columns but never
    /// bound values. The SQL text is reduced to its first words to say which statement failed.
    private func error(_ status: Int32, _ sql: String) -> StoreError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
        let statement = Self.summary(of: sql)
        switch status & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return StoreError(.timeout, "\(statement): database is busy (\(message))")
        case SQLITE_CONSTRAINT:
            if status == CSQLite_constraintUnique() || status == CSQLite_constraintPrimaryKey() {
                return StoreError(.duplicate, "\(statement): \(message)")
            }
            return StoreError(.constraintViolation, "\(statement): \(message)")
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return StoreError(.corruptValue, "\(statement): \(message)")
        default:
            return StoreError(.database, "\(statement): \(message) (SQLite \(status))")
        }
    }

    /// The statement's first four words: enough to say which one failed. Reads only as far as
    /// those words: a bulk insert's text is hundreds of kilobytes.
    static func summary(of sql: String) -> String {
        var words: [Substring] = []
        var wordStart: String.Index?
        var index = sql.startIndex
        while index < sql.endIndex, words.count < 4 {
            if sql[index].isWhitespace {
                if let start = wordStart { words.append(sql[start..<index]) }
                wordStart = nil
            } else if wordStart == nil {
                wordStart = index
            }
            index = sql.index(after: index)
        }
        if words.count < 4, let start = wordStart { words.append(sql[start..<index]) }
        return words.joined(separator: " ")
    }
}
