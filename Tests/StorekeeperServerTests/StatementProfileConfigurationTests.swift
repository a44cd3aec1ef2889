import Testing

@testable import StorekeeperServer

/// `sqliteStatementProfile` is read like every key, and refused with a PostgreSQL database
/// (whose statements it cannot time) before the server starts.
@Suite struct StatementProfileConfigurationTests {
    @Test func readFromTheEnvironmentForSQLite() throws {
        let loaded = try ServerConfiguration.load(environment: [
            "STOREKEEPER_SQLITE_STATEMENT_PROFILE": "/tmp/statements.tsv",
            "STOREKEEPER_DATABASE_URL": "sqlite:/tmp/storekeeper.db",
        ])
        #expect(loaded.sqliteStatementProfile == "/tmp/statements.tsv")
        #expect(try ServerConfiguration.load(environment: [:]).sqliteStatementProfile == nil)
    }

    @Test func refusedWithPostgreSQL() {
        let environment = [
            "STOREKEEPER_SQLITE_STATEMENT_PROFILE": "/tmp/statements.tsv",
            "STOREKEEPER_DATABASE_URL": "postgres://storekeeper@127.0.0.1:5432/storekeeper",
        ]
        let problem = ServerConfigurationError(
            code: "config.statementProfileNeedsSQLite",
            message: "sqliteStatementProfile is kept for a SQLite database only (PostgreSQL has pg_stat_statements)")
        #expect(throws: problem) { _ = try ServerConfiguration.load(environment: environment) }
        #expect(ServerConfiguration.check(environment: environment).problems == [problem])
        #expect(
            throws: ServerConfigurationError(
                code: "config.invalidValue",
                message: "sqliteStatementProfile from STOREKEEPER_SQLITE_STATEMENT_PROFILE must be a file path")
        ) {
            _ = try ServerConfiguration.load(environment: [
                "STOREKEEPER_SQLITE_STATEMENT_PROFILE": String(repeating: "a", count: 4097)
            ])
        }
    }
}
