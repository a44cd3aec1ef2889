/// Where a store lives, parsed from a connection string: a file path, a `sqlite:` URL
/// (`sqlite:data/storekeeper.db`, `sqlite:///abs/path.db`), or a `postgres://` URL.
/// - Note: Immutable value; `Sendable`.
public enum StoreLocation: Sendable, Hashable {
    case sqlite(path: String)
    case postgres(PostgresConfiguration)

    public init(_ string: String) throws(StoreError) {
        if string.hasPrefix("postgres://") || string.hasPrefix("postgresql://") {
            self = .postgres(try PostgresConfiguration(url: string))
            return
        }
        var path = string
        if path.hasPrefix("sqlite://") {
            path = String(path.dropFirst("sqlite://".count))
        } else if path.hasPrefix("sqlite:") {
            path = String(path.dropFirst("sqlite:".count))
        }
        if let query = path.firstIndex(of: "?") { path = String(path[..<query]) }
        guard !path.isEmpty, !path.contains("://") else {
            throw StoreError(.invalidConfiguration, "expected a file path, sqlite: URL or postgres:// URL")
        }
        self = .sqlite(path: path)
    }

    /// Opens the store, migrating it unless `migrate` is false; `observer` hears of each
    /// migration applied. `statementProfile`: SQLite only, a file for the statements' timing
    /// (`SQLiteStore.open`); refused for PostgreSQL, which has `pg_stat_statements`.
    public func open(
        migrate: Bool = true, observer: MigrationObserver = MigrationObserver(), statementProfile: String? = nil
    ) async throws -> any Store {
        switch self {
        case .sqlite(let path):
            return try await SQLiteStore.open(
                path: path, migrate: migrate, observer: observer, statementProfile: statementProfile)
        case .postgres where statementProfile != nil:
            throw StoreError(
                .invalidConfiguration,
                "a statement profile is kept for SQLite only; on PostgreSQL use its pg_stat_statements")
        case .postgres(let configuration):
            return try await PostgresStore.open(configuration: configuration, migrate: migrate, observer: observer)
        }
    }

    /// Applies the pending migrations on one connection and returns the identifiers applied
    /// now (empty when up to date). With `apply: false` only checks: throws `schemaOutdated`
    /// when some are pending. Throws `schemaTooNew` for a database from a newer binary.
    ///
    /// `observer` hears of each migration as it is applied, and may stop the run between two
    /// (the rest stay pending for the next run).
    public func migrate(apply: Bool = true, observer: MigrationObserver = MigrationObserver()) async throws
        -> [String]
    {
        let worker = ConnectionWorker(label: "storekeeper.migrate") { () throws(StoreError) -> any SQLConnection in
            switch self {
            case .sqlite(let path):
                return try SQLiteConnection(path: path, readOnly: false, busyTimeoutMilliseconds: 30_000)
            case .postgres(let configuration):
                return try PostgresConnection(
                    conninfo: configuration.conninfo, statementTimeoutMilliseconds: nil,
                    preparesStatements: configuration.preparedStatements)
            }
        }
        do {
            let applied = try await worker.run { connection in
                try Migrator.migrate(connection, apply: apply, observer: observer)
            }
            await worker.close()
            return applied
        } catch {
            await worker.close()
            throw error
        }
    }
}
