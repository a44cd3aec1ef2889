import AppStoreModels
import Entitlements
import Foundation

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

    init(connection: any SQLConnection) { self.connection = connection }

    var dialect: SQLDialect { connection.dialect }
    var engine: StoreEngine { dialect == .sqlite ? .sqlite : .postgres }

    func rows(_ sql: String, _ arguments: SQLValue...) throws(StoreError) -> [SQLRow] {
        try connection.query(sql, arguments)
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

    // MARK: - Savepoints

    func withSavepoint<R>(_ body: () throws -> R) throws -> R {
        savepoints += 1
        // The name is ours (a counter), never input: identifiers cannot be bound parameters.
        // The same three statements serve SQLite and PostgreSQL.
        let name = "storekeeper_savepoint_\(savepoints)"
        try connection.executeScript("SAVEPOINT \(name)")
        let result: R
        do {
            result = try body()
        } catch {
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

    static func json<T: Encodable>(_ value: T) -> SQLValue {
        .text(String(decoding: AppStoreJSON.encode(value), as: UTF8.self))
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String, column: String) throws(StoreError) -> T {
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
