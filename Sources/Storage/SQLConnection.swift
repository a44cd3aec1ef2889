/// The SQL dialect a statement is written for. Most statements are shared (written with
/// `$1`-style placeholders, which the SQLite connection maps to `?1`); the few that differ
/// (row locks, `SKIP LOCKED`, identity columns) switch on this.
enum SQLDialect: String, Sendable {
    case sqlite
    case postgres
}

/// One open database connection. Not thread-safe: a connection lives on its own
/// `ConnectionWorker` queue and is only touched there.
protocol SQLConnection: AnyObject {
    var dialect: SQLDialect { get }
    /// Runs one statement with bound arguments and returns its rows.
    func query(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> [SQLRow]
    /// Runs one statement with bound arguments and hands each row to `body` in place (see
    /// `SQLRowView`: its texts are views valid only during that call), copying nothing.
    func scan(_ sql: String, _ arguments: [SQLValue], _ body: (SQLRowView) throws(StoreError) -> Void)
        throws(StoreError)
    /// Runs one statement with bound arguments and returns the number of rows it changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> Int
    /// Runs a script of several statements without arguments (migrations, savepoints, settings).
    func executeScript(_ sql: String) throws(StoreError)
    /// Starts a transaction with `statement` (`BEGIN`, `BEGIN IMMEDIATE`, …). Until `commit()` or
    /// `rollback()`, a statement that would run after the database ended the transaction on its
    /// own is refused rather than run (and committed) by itself.
    func begin(_ statement: String) throws(StoreError)
    /// `COMMIT`, throwing unless the transaction really committed.
    func commit() throws(StoreError)
    /// `ROLLBACK` of the transaction `begin` started, if the database has not ended it already;
    /// a failure leaves nothing to undo (the connection is then replaced or the server rolled
    /// back), so none is thrown.
    func rollback()
    /// Whether the connection can still be used; a broken one is replaced before the next use.
    var isHealthy: Bool { get }
    /// Whether a transaction is open and can still commit: false once the database ended it on
    /// its own (SQLite rolls a transaction back after some I/O and memory errors), or, on
    /// PostgreSQL, a failed statement outside a savepoint aborted it.
    var inTransaction: Bool { get }
    /// Whether the schema stamps purchases' fact changes (`purchase_fact_stamps`, SQLite from
    /// migration 0027 on); PostgreSQL never does.
    var keepsFactStamps: Bool { get }
    /// Forgets what was learnt of the schema (after migrations ran on this connection).
    func forgetSchema()
    func close()
}

extension SQLConnection {
    var keepsFactStamps: Bool { false }
    func forgetSchema() {}

    /// `body` in a transaction begun with `statement`: committed when it returns, rolled back
    /// when anything throws (the commit too). The one place the stores begin and end theirs.
    func transaction<R>(_ statement: String, _ body: () throws -> R) throws -> R {
        try begin(statement)
        do {
            let result = try body()
            try commit()
            return result
        } catch {
            rollback()
            throw error
        }
    }
}
