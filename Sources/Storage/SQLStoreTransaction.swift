import AppStoreModels
import Entitlements
import Foundation
import Synchronization

/// `StoreReader` and `StoreTransaction` on one SQL connection; the same statements serve
/// SQLite and PostgreSQL except where a `switch dialect` shows the difference.
///
/// The store opens the transaction (`BEGIN IMMEDIATE` / `BEGIN`) before handing this to a
/// body and commits or rolls back after; nothing here commits.
/// - Note: Not thread-safe; lives for one `read` / `write` body on the connection's queue.
final class SQLStoreTransaction: StoreTransaction {
    let connection: any SQLConnection
    /// Savepoints opened so far in this transaction; each takes the next number as its name,
    /// so nested and successive savepoints never share one.
    private var savepoints = 0
    /// Daily analytics differences gathered by `applyAnalyticsContribution`, written by
    /// `flushAnalyticsDaily` before the transaction commits.
    var pendingAnalyticsDaily: [PendingAnalyticsRow: AnalyticsMeasures] = [:]
    /// Retention and LTV differences gathered by `applyAnalyticsCohorts`, written with the
    /// daily ones (after them) by `flushAnalyticsDaily`.
    var pendingAnalyticsCohorts = PendingCohortRows()
    /// The facts this transaction inserted and the text stored for each, by part of
    /// `customerFactsStatement` and row id: the customer's evaluation reads them back at once,
    /// and decoding the text just encoded from them was a quarter of the facts' decoding on the
    /// POST path. A fact is used for a row only while the row holds exactly that text.
    var insertedFacts: [InsertedFact: (json: String, fact: Fact)] = [:]
    /// The fact rows this transaction wrote through `recordFactWrite`, by purchase in the order
    /// written, each with the purchase's stamps around it (SQLite; `factRowsWritten`).
    var factWrites: [Purchase: [StampedFactWrite]] = [:]
    /// Rows this transaction's bulk inserts wrote by `COPY` (PostgreSQL), counted when the copy
    /// succeeded: which way a bulk insert went, for its tests.
    var rowsCopied = 0

    struct InsertedFact: Hashable {
        var part: Int64
        var id: Int64
    }

    init(connection: any SQLConnection) { self.connection = connection }

    /// A store's write (or PostgreSQL read) transaction on `connection`: `body`, then the daily
    /// and cohort rows it gathered, committed together or not at all.
    static func run<R>(on connection: any SQLConnection, begin: String, _ body: (SQLStoreTransaction) throws -> R)
        throws -> R
    {
        try connection.transaction(begin) {
            let transaction = SQLStoreTransaction(connection: connection)
            let result = try body(transaction)
            try transaction.flushAnalyticsDaily()
            return result
        }
    }

    var dialect: SQLDialect { connection.dialect }
    var engine: StoreEngine { dialect == .sqlite ? .sqlite : .postgres }

    func rows(_ sql: String, _ arguments: SQLValue...) throws(StoreError) -> [SQLRow] {
        try connection.query(sql, arguments)
    }

    func scan(_ sql: String, _ arguments: SQLValue..., body: (SQLRowView) throws(StoreError) -> Void)
        throws(StoreError)
    {
        try connection.scan(sql, arguments, body)
    }

    func row(_ sql: String, _ arguments: SQLValue...) throws(StoreError) -> SQLRow? {
        try connection.query(sql, arguments).first
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: SQLValue...) throws(StoreError) -> Int {
        try connection.execute(sql, arguments)
    }

    /// Inserts with `RETURNING id`: the new id, or `nil` when `ON CONFLICT DO NOTHING` skipped it.
    func insertReturningId(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> Int64? {
        try connection.query(sql, arguments).first.map { row throws(StoreError) in try row.integer(0) }
    }

    // MARK: - Multi-row inserts

    /// The most rows one bulk statement carries. SQLite binds at most 32,766 parameters per
    /// statement (PostgreSQL 65,535): 512 rows of up to 63 columns stay under both. A shorter
    /// tail goes in power-of-two statements, so the SQLite connection caches at most ten
    /// statement texts per table however the batches are cut.
    static let maximumRowsPerStatement = 512

    /// Runs `insert` (`INSERT INTO table (columns)`) for every row (`width` values each) as
    /// multi-row `VALUES` statements ending in `onConflict`; returns how many rows they inserted.
    func insertRows(into insert: String, onConflict: String, width: Int, _ rows: [[SQLValue]]) throws(StoreError)
        -> Int
    {
        var inserted = 0
        try forEachBulkStatement(insert, onConflict, width: width, rows) { sql, arguments throws(StoreError) in
            inserted += try connection.execute(sql, arguments)
        }
        return inserted
    }

    /// `insertRows` whose `suffix` ends in `RETURNING`: the rows every statement returned, in no
    /// promised order (neither engine promises one).
    func insertRowsReturning(into insert: String, suffix: String, width: Int, _ rows: [[SQLValue]])
        throws(StoreError) -> [SQLRow]
    {
        var returned: [SQLRow] = []
        try forEachBulkStatement(insert, suffix, width: width, rows) { sql, arguments throws(StoreError) in
            returned += try connection.query(sql, arguments)
        }
        return returned
    }

    /// Cuts `rows` into the multi-row statements described at `maximumRowsPerStatement` and
    /// hands each statement's text and values to `body`.
    private func forEachBulkStatement(
        _ insert: String, _ suffix: String, width: Int, _ rows: [[SQLValue]],
        _ body: (String, [SQLValue]) throws(StoreError) -> Void
    ) throws(StoreError) {
        precondition(width * Self.maximumRowsPerStatement <= 32_766, "a bulk statement would bind too many values")
        var next = 0
        while next < rows.count {
            let remaining = rows.count - next
            let count =
                remaining >= Self.maximumRowsPerStatement
                ? Self.maximumRowsPerStatement : 1 << (Int.bitWidth - 1 - remaining.leadingZeroBitCount)
            var arguments: [SQLValue] = []
            arguments.reserveCapacity(count * width)
            for row in rows[next..<next + count] {
                precondition(row.count == width, "a bulk row has the wrong number of columns")
                arguments += row
            }
            let shape = BulkShape(insert: insert, suffix: suffix, width: width, rows: count)
            let sql = Self.bulkStatements.withLock { cache in
                if let sql = cache[shape] { return sql }
                let sql = Self.multiRowStatement(insert, suffix: suffix, width: width, rows: count)
                cache[shape] = sql
                return sql
            }
            try body(sql, arguments)
            next += count
        }
    }

    struct BulkShape: Hashable {
        var insert: String
        var suffix: String
        var width: Int
        var rows: Int
    }

    /// Bulk statement texts built so far: a handful per table (full statements and the
    /// power-of-two tails), shared by every connection.
    static let bulkStatements = Mutex<[BulkShape: String]>([:])

    /// `insert VALUES ($1, …, $width), ($width+1, …), … suffix` (`ON CONFLICT …`, `RETURNING …`,
    /// or the rest of a `SELECT` reading the values): placeholders only, the values stay bound.
    static func multiRowStatement(_ insert: String, suffix: String, width: Int, rows: Int) -> String {
        var text = insert + "\nVALUES "
        text.reserveCapacity(insert.utf8.count + suffix.utf8.count + rows * width * 8)
        var parameter = 0
        for row in 0..<rows {
            text += row == 0 ? "(" : ", ("
            for column in 0..<width {
                parameter += 1
                text += column == 0 ? "$\(parameter)" : ", $\(parameter)"
            }
            text += ")"
        }
        return text + "\n" + suffix
    }

    // MARK: - Maintenance

    func refreshPlannerStatistics() throws {
        switch dialect {
        case .sqlite: return
        case .postgres:
            // The tables of the store's schema only (a bare ANALYZE also takes the catalogs and
            // other schemas' tables, and each is held until the commit), named as `regclass`
            // quotes and qualifies them, without the URL's statement timeout: a large store
            // takes seconds.
            let tables = try rows(
                """
                SELECT c.oid::regclass::text FROM pg_class c
                WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
                  AND c.relkind IN ('r', 'p')
                ORDER BY c.relname
                """
            ).map { row throws(StoreError) in try row.text(0) }
            guard !tables.isEmpty else { return }
            try connection.executeScript("SET LOCAL statement_timeout = 0")
            try connection.executeScript("ANALYZE " + tables.joined(separator: ", "))
        }
    }

    // MARK: - Savepoints

    func requireOpen() throws {
        // A lost connection is retryable (the group is run again on a fresh one).
        guard connection.isHealthy else { throw StoreError(.connectionLost, "the database connection was lost") }
        guard connection.inTransaction else {
            throw StoreError.transactionEnded()
        }
    }

    func withSavepoint<R>(_ body: () throws -> R) throws -> R {
        savepoints += 1
        // The name is ours (a counter), never input: identifiers cannot be bound parameters.
        // The same three statements serve SQLite and PostgreSQL.
        let name = "storekeeper_savepoint_\(savepoints)"
        try connection.executeScript("SAVEPOINT \(name)")
        let pendingBefore = pendingAnalyticsDaily
        let pendingCohortsBefore = pendingAnalyticsCohorts
        let insertedBefore = insertedFacts
        let factWritesBefore = factWrites
        let result: R
        do {
            result = try body()
        } catch {
            // What the body gathered for the daily rows goes with its writes.
            pendingAnalyticsDaily = pendingBefore
            pendingAnalyticsCohorts = pendingCohortsBefore
            // Rolled-back rows are gone, and SQLite may give their ids to the next rows.
            insertedFacts = insertedBefore
            factWrites = factWritesBefore
            // SQLite ended the whole transaction itself (an I/O or memory error): nothing is left
            // to restore, the connection refuses every later statement, and the body's error
            // says why (a disk that is full).
            if dialect == .sqlite, connection.isHealthy, !connection.inTransaction { throw error }
            // Undo the body's writes (on PostgreSQL this also clears an aborted state), then
            // drop the savepoint; a failure here leaves the transaction unusable and is thrown.
            try connection.executeScript("ROLLBACK TO SAVEPOINT \(name)")
            try connection.executeScript("RELEASE SAVEPOINT \(name)")
            throw error
        }
        try connection.executeScript("RELEASE SAVEPOINT \(name)")
        return result
    }

    // MARK: - JSON columns

    /// What `AppStoreJSON.encode` writes, as a text value (`ColumnJSON`).
    static func json<T: Encodable>(_ value: T) -> SQLValue {
        .text(jsonText(value))
    }

    /// The JSON stored for `value`: canonical (what `AppStoreJSON.encode` writes), as text.
    static func jsonText<T: Encodable>(_ value: T) -> String {
        ColumnJSON.encode(value)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String, column: String) throws(StoreError) -> T {
        if let value = ColumnJSONReader.decode(T.self, from: text) { return value }
        do {
            return try AppStoreJSON.decode(T.self, from: Data(text.utf8))
        } catch {
            throw StoreError(.corruptValue, "\(column) does not decode as \(T.self): \(error)")
        }
    }

    static func environment(_ raw: String?) -> AppStoreEnvironment? {
        raw.flatMap(AppStoreEnvironment.init(rawValue:))
    }

    func appliedMigrations() throws -> [String] {
        try rows("SELECT identifier FROM schema_migrations ORDER BY identifier").map { row throws(StoreError) in
            try row.text(0)
        }
    }
}
