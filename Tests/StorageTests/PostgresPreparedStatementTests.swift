import Foundation
import Testing

@testable import Storage

/// Statements prepared once per PostgreSQL connection (`PostgresConnection`), and the URL's
/// `prepared_statements=off` for poolers that cannot carry them.
@Suite struct PostgresPreparedStatementTests {
    @Test func urlOption() throws {
        #expect(try PostgresConfiguration(url: "postgres://u@h/db").preparedStatements == true)
        #expect(try PostgresConfiguration(url: "postgres://u@h/db?prepared_statements=on").preparedStatements == true)
        let off = try PostgresConfiguration(url: "postgres://u@h/db?prepared_statements=off&sslmode=disable")
        #expect(off.preparedStatements == false)
        // Storekeeper's own option is not passed to libpq; the others are.
        #expect(off.conninfo == "postgresql://u@h/db?sslmode=disable")
        #expect(throws: StoreError(.invalidConfiguration, "prepared_statements must be on or off")) {
            try PostgresConfiguration(url: "postgres://u@h/db?prepared_statements=yes")
        }
    }

    static func connection(preparing: Bool) throws -> PostgresConnection? {
        guard let url = Backend.postgresURL else { return nil }
        let configuration = try PostgresConfiguration(url: url)
        return try PostgresConnection(
            conninfo: configuration.conninfo, statementTimeoutMilliseconds: nil, preparesStatements: preparing)
    }

    /// The statements this session has prepared, by text, but for the connection's session
    /// settings (`set_config`) and this query itself (prepared too once run).
    static func prepared(_ connection: PostgresConnection) throws -> [String] {
        try connection.query(
            """
            SELECT statement FROM pg_prepared_statements
            WHERE statement NOT LIKE '%pg_prepared_statements%' AND statement NOT LIKE '%set_config%'
            ORDER BY statement
            """, []
        ).map { try $0.text(0) }
    }

    /// A table of its own (one row: 7) on a connection that prepares, for `body`, given the
    /// table's name, the connection and a schema change another instance might make (a column
    /// added); the table is dropped afterwards.
    static func withProbeTable(
        _ body: (_ table: String, _ connection: PostgresConnection, _ addColumn: () throws -> Void) throws -> Void
    ) throws {
        let url = try #require(Backend.postgresURL)
        let table = "prepared_probe_\(UInt32.random(in: 0...UInt32.max))"
        try PostgresAdmin.execute(url, "CREATE TABLE \(table) (a BIGINT)")
        defer { try? PostgresAdmin.execute(url, "DROP TABLE \(table)") }
        try PostgresAdmin.execute(url, "INSERT INTO \(table) VALUES (7)")
        let connection = try #require(try Self.connection(preparing: true))
        defer { connection.close() }
        try body(table, connection) { try PostgresAdmin.execute(url, "ALTER TABLE \(table) ADD COLUMN b TEXT") }
    }

    @Test(.enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage))
    func aStatementIsPreparedOnItsSecondRunOncePerTextAndTypes() throws {
        let connection = try #require(try Self.connection(preparing: true))
        defer { connection.close() }
        #expect(try connection.query("SELECT $1::bigint + 1", [.integer(1)])[0].integer(0) == 2)
        // Run once: sent unnamed, nothing kept on the server.
        #expect(try Self.prepared(connection) == [])
        for value in 2...4 {
            #expect(try connection.query("SELECT $1::bigint + 1", [.integer(Int64(value))])[0].integer(0) == value + 1)
        }
        #expect(try Self.prepared(connection) == ["SELECT $1::bigint + 1"])
        // The same text with an argument of another type is another statement.
        for _ in 0..<2 {
            #expect(try connection.query("SELECT $1::bigint + 1", [.text("41")])[0].integer(0) == 42)
            #expect(try connection.query("SELECT $1::bigint + 1", [.null])[0].values == [.null])
        }
        #expect(
            try Self.prepared(connection) == [
                "SELECT $1::bigint + 1", "SELECT $1::bigint + 1", "SELECT $1::bigint + 1",
            ])
        let unprepared = try #require(try Self.connection(preparing: false))
        defer { unprepared.close() }
        for _ in 0..<3 { #expect(try unprepared.query("SELECT $1::bigint + 1", [.integer(1)])[0].integer(0) == 2) }
        #expect(try Self.prepared(unprepared) == [])
    }

    /// A preparation refused inside an aborted transaction is not kept: after the rollback the
    /// statement prepares and runs.
    @Test(.enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage))
    func aPreparationRefusedInAnAbortedTransactionIsNotKept() throws {
        let connection = try #require(try Self.connection(preparing: true))
        defer { connection.close() }
        try connection.executeScript("BEGIN")
        #expect(throws: StoreError.self) { try connection.query("SELECT 1 / $1::bigint", [.integer(0)]) }
        // Both runs fail (25P02: the transaction is aborted): the first unnamed, the second
        // in its preparation.
        for _ in 0..<2 {
            #expect(throws: StoreError.self) { try connection.query("SELECT 2 + $1::bigint", [.integer(1)]) }
        }
        try connection.executeScript("ROLLBACK")
        #expect(try Self.prepared(connection) == [])
        #expect(try connection.query("SELECT 2 + $1::bigint", [.integer(1)])[0].integer(0) == 3)
        #expect(try Self.prepared(connection) == ["SELECT 2 + $1::bigint"])
        #expect(try connection.query("SELECT 2 + $1::bigint", [.integer(2)])[0].integer(0) == 4)
    }

    /// Past `maximumPreparedStatements` prepared texts, every statement is deallocated and
    /// preparing starts over: request-shaped texts cannot grow a backend's memory forever.
    @Test(.enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage))
    func preparedStatementsAreBounded() throws {
        let connection = try #require(try Self.connection(preparing: true))
        defer { connection.close() }
        let limit = PostgresConnection.maximumPreparedStatements
        func twice(_ value: Int) throws { for _ in 0..<2 { _ = try connection.query("SELECT \(value)", []) } }
        for value in 0..<100 { try twice(value) }
        #expect(try Self.prepared(connection).count == 100)
        for value in 100..<(limit + 50) { try twice(value) }
        let kept = try Self.prepared(connection)
        #expect(kept.count < limit)
        #expect(!kept.contains("SELECT 0"))
        #expect(kept.contains("SELECT \(limit + 49)"))
    }

    /// Which failures of a prepared statement discard the prepared statements.
    @Test func whatInvalidatesPreparedStatements() {
        #expect(PostgresConnection.invalidatesPrepared("0A000", ranBefore: true))
        // A statement that never ran: its 0A000 is an error of its own ("not supported").
        #expect(!PostgresConnection.invalidatesPrepared("0A000", ranBefore: false))
        #expect(PostgresConnection.invalidatesPrepared("26000", ranBefore: false))
        #expect(!PostgresConnection.invalidatesPrepared("42P05", ranBefore: true))
        #expect(!PostgresConnection.invalidatesPrepared("23505", ranBefore: true))
        #expect(!PostgresConnection.invalidatesPrepared(nil, ranBefore: true))
    }

    /// A kept plan whose result columns a schema change altered (another instance migrated):
    /// PostgreSQL refuses it (SQLSTATE 0A000); the connection stops using its prepared
    /// statements and reports a retryable conflict, and the statement's next run succeeds.
    @Test(.enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage))
    func aPlanOvertakenByASchemaChangeIsRetryable() throws {
        try Self.withProbeTable { table, connection, addColumn in
            for _ in 0..<2 {
                #expect(try connection.query("SELECT * FROM \(table)", [])[0].values == [.integer(7)])
            }
            #expect(try Self.prepared(connection) == ["SELECT * FROM \(table)"])
            try addColumn()
            do {
                _ = try connection.query("SELECT * FROM \(table)", [])
                Issue.record("the stale plan was run")
            } catch let error as StoreError {
                #expect(error.code == .conflictRetry)
                #expect(error.isRetryable)
            }
            for _ in 0..<2 {
                #expect(try connection.query("SELECT * FROM \(table)", [])[0].values == [.integer(7), .null])
            }
        }
    }

    /// A statement prepared whose prepared runs all failed (here: division by zero) and whose
    /// plan a schema change then overtook: its 0A000 is not a retryable conflict (it never ran
    /// here), but it is dropped, so its next run works instead of failing for good.
    @Test(.enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage))
    func aStalePlanOfAStatementThatNeverRanIsDropped() throws {
        try Self.withProbeTable { table, connection, addColumn in
            let sql = "SELECT * FROM \(table) WHERE 1 / $1::bigint = 1"
            #expect(try connection.query(sql, [.integer(1)])[0].values == [.integer(7)])
            // Its second run prepares it, and fails.
            #expect(throws: StoreError.self) { try connection.query(sql, [.integer(0)]) }
            #expect(try Self.prepared(connection) == [sql])
            try addColumn()
            do {
                _ = try connection.query(sql, [.integer(1)])
                Issue.record("the stale plan was run")
            } catch let error as StoreError {
                #expect(error.code == .database)
            }
            #expect(try connection.query(sql, [.integer(1)])[0].values == [.integer(7), .null])
        }
    }
}
