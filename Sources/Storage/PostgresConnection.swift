import CLibPQ
import Foundation

/// One libpq connection. Every argument is bound (typed `int8` / `text`, text format); results
/// come back as text and are typed by the column's OID.
///
/// A statement run a second time is prepared (`PQprepare`, then `PQexecPrepared`), keyed by
/// its text and argument types: PostgreSQL then parses and analyzes it once, and may keep its
/// plan, instead of on every execution (a bulk import spent 42% of PostgreSQL's time parsing,
/// analyzing and planning). A statement run once, such as a multi-row insert whose NULLs fall in
/// a pattern of their own, is sent unnamed (`PQexecParams`) and holds nothing on the server.
/// What stays prepared is bounded in count and in text (`maximumPreparedStatements`,
/// `maximumPreparedBytes`); past either, all is deallocated and preparing starts over.
/// `prepared_statements=off` in the URL sends every statement unnamed, for a pooler in
/// transaction mode that does not carry prepared statements between its server connections.
/// - Note: Not thread-safe; used only on its worker's queue.
final class PostgresConnection: SQLConnection {
    let dialect = SQLDialect.postgres
    private var handle: OpaquePointer?
    private let preparesStatements: Bool
    /// Statements prepared and usable, by text and argument types.
    private var prepared: [PreparedKey: Prepared] = [:]
    /// Hashes of keys run once unnamed: the next run of one prepares it.
    private var seenOnce: Set<Int> = []
    /// What is prepared on the server, usable or not (stale ones stay until `DEALLOCATE ALL`).
    private var serverStatements = 0
    private var serverBytes = 0
    private var nextStatement = 0

    private struct PreparedKey: Hashable {
        var sql: String
        var types: [Oid]
    }

    private struct Prepared {
        var name: String
        /// Whether it has run successfully here: only then is a 0A000 a plan gone stale.
        var ran: Bool
    }

    /// The most statements kept prepared on one connection: the application has a few hundred
    /// texts.
    static let maximumPreparedStatements = 1_000
    /// The most statement text kept prepared on one connection. The server's memory is about
    /// fifty times the text once planned: a 512-row insert (31 KB of text) holds 1.5 MB.
    static let maximumPreparedBytes = 256 * 1_024
    /// The most keys remembered as run once.
    static let maximumSeenOnce = 4_096

    /// Connects with a libpq connection string and applies the session settings.
    init(conninfo: String, statementTimeoutMilliseconds: Int?, preparesStatements: Bool = true) throws(StoreError) {
        self.preparesStatements = preparesStatements
        let connection = PQconnectdb(conninfo)
        handle = connection
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { Self.clean(String(cString: PQerrorMessage($0))) } ?? "out of memory"
            close()
            throw StoreError(.connectionLost, "cannot connect to PostgreSQL: \(message)")
        }
        CLibPQ_silenceNotices(connection)
        // No JIT: our statements are short, but a join over a list of windows (churn) is
        // estimated at millions of rows, and PostgreSQL then spent 93 ms compiling a statement
        // that ran in 33 ms.
        // Each again when a timeout cancels it: one set on the database or the role applies to
        // these statements too, and one of a few milliseconds on a loaded server cancelled even
        // them, so the store did not open.
        try Migrator.againOnTimeout { () throws(StoreError) in
            _ = try query("SELECT set_config('jit', 'off', false)", [])
        }
        if let statementTimeoutMilliseconds {
            try Migrator.againOnTimeout { () throws(StoreError) in
                _ = try query(
                    "SELECT set_config('statement_timeout', $1, false)", [.text(String(statementTimeoutMilliseconds))])
            }
        }
    }

    deinit { close() }

    var isHealthy: Bool { handle.map { PQstatus($0) == CONNECTION_OK } ?? false }
    var inTransaction: Bool { handle.map { PQtransactionStatus($0) == PQTRANS_INTRANS } ?? false }

    func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// The server process id, for tests that terminate this backend.
    var backendProcessId: Int32 { handle.map { PQbackendPID($0) } ?? 0 }

    func query(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> [SQLRow] {
        var rows: [SQLRow] = []
        try scan(sql, arguments) { row in rows.append(row.copied()) }
        return rows
    }

    func scan(_ sql: String, _ arguments: [SQLValue], _ body: (SQLRowView) throws(StoreError) -> Void)
        throws(StoreError)
    {
        let result = try run(sql, arguments)
        defer { PQclear(result) }
        for row in 0..<PQntuples(result) {
            try body(SQLRowView(source: .postgres(result, row)))
        }
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> Int {
        let result = try run(sql, arguments)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    func executeScript(_ sql: String) throws(StoreError) {
        guard let handle else { throw StoreError(.connectionLost, "PostgreSQL connection is closed") }
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result, sql)
    }

    /// PostgreSQL itself refuses every statement of a transaction it ended (a failed statement
    /// aborts it until `ROLLBACK`; a lost connection fails them all), so nothing is tracked here.
    func begin(_ statement: String) throws(StoreError) {
        // What an earlier caller left open must not turn this BEGIN into a warning and the
        // transaction into part of the old one.
        if let handle, PQtransactionStatus(handle) != PQTRANS_IDLE { rollback() }
        try executeScript(statement)
    }

    /// On a broken connection the server has already rolled back.
    func rollback() {
        if isHealthy { try? executeScript("ROLLBACK") }
    }

    /// PostgreSQL answers `COMMIT` of an aborted transaction with success and the tag
    /// `ROLLBACK`: that is a failure here, so nothing is acknowledged that did not commit.
    func commit() throws(StoreError) {
        guard let handle else { throw StoreError(.connectionLost, "PostgreSQL connection is closed") }
        let result = PQexec(handle, "COMMIT")
        defer { PQclear(result) }
        try check(result, "COMMIT")
        let tag = PQcmdStatus(result).map { String(cString: $0) } ?? ""
        guard tag == "COMMIT" else {
            throw StoreError(.database, "the transaction was rolled back at COMMIT (\(tag))")
        }
    }

    /// `COPY table (columns) FROM STDIN` of `rows` (COPY's text format): how many rows it
    /// copied. A copy that fails fails as a statement does (a unique key already held is
    /// `.duplicate`) and leaves the transaction aborted, for a savepoint to take back. The table
    /// and column names are the store's own, never input.
    func copy(into table: String, columns: [String], _ rows: PostgresCopyText) throws(StoreError) -> Int {
        guard let handle else { throw StoreError(.connectionLost, "PostgreSQL connection is closed") }
        let sql = "COPY \(table) (\(columns.joined(separator: ", "))) FROM STDIN"
        let start = PQexec(handle, sql)
        guard let start, PQresultStatus(start) == PGRES_COPY_IN else {
            defer { PQclear(start) }
            try check(start, sql)
            throw StoreError(.database, "\(sql): PostgreSQL did not start the copy")
        }
        PQclear(start)
        // In pieces: libpq copies what it is given into its output buffer before sending it.
        var sent = true
        rows.bytes.withUnsafeBufferPointer { bytes in
            var offset = 0
            while sent, offset < bytes.count, let base = bytes.baseAddress {
                let length = min(Self.copyPieceBytes, bytes.count - offset)
                sent =
                    PQputCopyData(
                        handle, UnsafeRawPointer(base + offset).assumingMemoryBound(to: CChar.self), Int32(length)) == 1
                offset += length
            }
        }
        // Ended either way; a message makes the server fail the copy rather than keep a part.
        _ = sent ? PQputCopyEnd(handle, nil) : PQputCopyEnd(handle, "the rows could not be sent")
        var outcome: Result<Int, StoreError>?
        while let result = PQgetResult(handle) {
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH {
                // The copy did not end (the connection failed under it): this connection is
                // done for, and the transaction with it.
                close()
                throw StoreError(.connectionLost, "\(sql): the copy could not be ended")
            }
            guard outcome == nil else { continue }
            do {
                try check(result, sql)
                outcome = .success(Int(String(cString: PQcmdTuples(result))) ?? 0)
            } catch {
                outcome = .failure(error)
            }
        }
        guard let outcome else {
            throw StoreError(isHealthy ? .database : .connectionLost, "\(sql): no result from PostgreSQL")
        }
        // Rows that could not be sent fail the copy on the server as a cancellation (57014),
        // which is not the statement timeout a retry could outlast.
        guard sent || !isHealthy else { throw StoreError(.database, "\(sql): the rows could not be sent") }
        return try outcome.get()
    }

    /// The most bytes handed to `PQputCopyData` at once.
    static let copyPieceBytes = 256 * 1_024

    // MARK: - Internals

    private func run(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> OpaquePointer {
        guard let handle else { throw StoreError(.connectionLost, "PostgreSQL connection is closed") }
        var types: [Oid] = []
        var values: [UnsafeMutablePointer<CChar>?] = []
        types.reserveCapacity(arguments.count)
        values.reserveCapacity(arguments.count)
        defer { for value in values { free(value) } }
        for argument in arguments {
            switch argument {
            case .null:
                types.append(0)
                values.append(nil)
            case .integer(let value):
                types.append(20)  // int8
                values.append(strdup(String(value)))
            case .text(let value):
                types.append(25)  // text
                // One copy, NUL-terminated, straight from the string's bytes (freed with the rest).
                let copy = try SQLValue.withStorableUTF8(value) { bytes -> UnsafeMutablePointer<CChar>? in
                    guard let copy = malloc(bytes.count + 1)?.assumingMemoryBound(to: CChar.self) else { return nil }
                    if let base = bytes.baseAddress { memcpy(copy, base, bytes.count) }
                    copy[bytes.count] = 0
                    return copy
                }
                // (A null argument would be sent as SQL NULL.)
                guard let copy else { throw StoreError(.database, "no memory for a statement argument") }
                values.append(copy)
            }
        }
        let key = preparesStatements ? PreparedKey(sql: sql, types: types) : nil
        let name = try key.flatMap { key throws(StoreError) in try statementName(key, handle: handle) }
        let result = values.withUnsafeBufferPointer { valuePointers in
            valuePointers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { constPointers in
                if let name {
                    PQexecPrepared(handle, name, Int32(arguments.count), constPointers.baseAddress, nil, nil, 0)
                } else {
                    PQexecParams(handle, sql, Int32(arguments.count), types, constPointers.baseAddress, nil, nil, 0)
                }
            }
        }
        do {
            try check(result, sql)
        } catch {
            let sqlstate = result.flatMap(CLibPQ_sqlstate).map { String(cString: $0) }
            PQclear(result)
            if let key, name != nil, Self.invalidatesPrepared(sqlstate, ranBefore: prepared[key]?.ran == true) {
                // Every prepared statement is suspect (a migration changes several tables; a
                // pooler that lost one lost all): none is used again, and the transaction's
                // retry prepares what it runs anew.
                prepared = [:]
                if sqlstate == "26000" { serverStatements = 0; serverBytes = 0 }
                throw StoreError(.conflictRetry, error.detail)
            }
            // A 0A000 of a statement that never ran here may be its plan gone stale too (its
            // first runs failed for other reasons): it alone is dropped, so a stale plan
            // cannot fail it for good.
            if let key, name != nil, sqlstate == "0A000" { prepared[key] = nil }
            throw error
        }
        if let key, name != nil { prepared[key]?.ran = true }
        return result!
    }

    /// Whether a failed run of a prepared statement means the prepared statements themselves
    /// are gone or stale: a plan whose result columns a schema change altered (0A000, for a
    /// statement that ran before: other 0A000s are errors of the statement), or a statement the
    /// server does not know (26000: a pooler switched server connections). Its preparation
    /// answering 42P05 (the name exists) is handled where it is prepared.
    static func invalidatesPrepared(_ sqlstate: String?, ranBefore: Bool) -> Bool {
        switch sqlstate {
        case "0A000": ranBefore
        case "26000": true
        default: false
        }
    }

    /// The name `key` is prepared under on this connection: preparing it on its second run;
    /// `nil` on its first (run unnamed).
    private func statementName(_ key: PreparedKey, handle: OpaquePointer) throws(StoreError) -> String? {
        if let prepared = prepared[key] { return prepared.name }
        let hash = key.hashValue
        guard seenOnce.contains(hash) else {
            if seenOnce.count >= Self.maximumSeenOnce { seenOnce = [] }
            seenOnce.insert(hash)
            return nil
        }
        let bytes = key.sql.utf8.count
        guard bytes <= Self.maximumPreparedBytes else { return nil }
        if serverStatements >= Self.maximumPreparedStatements || serverBytes + bytes > Self.maximumPreparedBytes {
            let result = PQexec(handle, "DEALLOCATE ALL")
            defer { PQclear(result) }
            try check(result, "DEALLOCATE ALL")
            prepared = [:]
            serverStatements = 0
            serverBytes = 0
        }
        nextStatement += 1
        let name = "sk\(nextStatement)"
        let result = PQprepare(handle, name, key.sql, Int32(key.types.count), key.types)
        defer { PQclear(result) }
        do {
            try check(result, key.sql)
        } catch {
            // The name exists already: the server connection is not this connection's session
            // (a pooler switched it), so none of the prepared statements can be trusted.
            if result.flatMap(CLibPQ_sqlstate).map({ String(cString: $0) }) == "42P05" {
                prepared = [:]
                throw StoreError(.conflictRetry, error.detail)
            }
            throw error
        }
        seenOnce.remove(hash)
        prepared[key] = Prepared(name: name, ran: false)
        serverStatements += 1
        serverBytes += bytes
        return name
    }

    private func check(_ result: OpaquePointer?, _ sql: String) throws(StoreError) {
        guard let result else {
            throw StoreError(
                isHealthy ? .database : .connectionLost,
                "\(SQLiteConnection.summary(of: sql)): no result from PostgreSQL")
        }
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK { return }
        // Only now: the summary walks the text, and a bulk insert's is hundreds of kilobytes.
        let statement = SQLiteConnection.summary(of: sql)
        let sqlstate = CLibPQ_sqlstate(result).map { String(cString: $0) } ?? ""
        let constraint = CLibPQ_constraintName(result).map { String(cString: $0) }
        let primary = CLibPQ_primaryMessage(result).map { String(cString: $0) } ?? ""
        throw Self.error(
            sqlstate: sqlstate, primary: primary, constraint: constraint, statement: statement,
            connectionBroken: !isHealthy)
    }

    /// Classes 22 (data exception) and 23 (integrity) quote values in their messages, so only
    /// the SQLSTATE and the constraint name are kept for those.
    static func error(
        sqlstate: String, primary: String, constraint: String?, statement: String, connectionBroken: Bool
    ) -> StoreError {
        let quotesValues = sqlstate.hasPrefix("22") || sqlstate.hasPrefix("23")
        let message = quotesValues ? "constraint \(constraint ?? "?")" : clean(primary)
        let detail = "\(statement): \(message) (SQLSTATE \(sqlstate.isEmpty ? "none" : sqlstate))"
        if connectionBroken || sqlstate.hasPrefix("08") || sqlstate == "57P01" || sqlstate == "57P02"
            || sqlstate == "57P03"
        {
            return StoreError(.connectionLost, detail)
        }
        switch sqlstate {
        case "23505": return StoreError(.duplicate, detail)
        case "40001", "40P01": return StoreError(.conflictRetry, detail)
        case "57014", "55P03": return StoreError(.timeout, detail)
        default:
            if sqlstate.hasPrefix("23") { return StoreError(.constraintViolation, detail) }
            return StoreError(.database, detail)
        }
    }

    static func clean(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: " ")
    }
}
