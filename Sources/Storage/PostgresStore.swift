import Foundation

/// The shared store: PostgreSQL through libpq, for any number of Storekeeper instances.
///
/// A pool of connections, each on its own dispatch queue. Every `write` is one transaction
/// (`BEGIN` … `COMMIT`, `ROLLBACK` on any error) at READ COMMITTED, with one customer's
/// updates serialized by `SELECT … FOR UPDATE` on the customer row; every `read` is a
/// `REPEATABLE READ, READ ONLY` snapshot. A connection found broken is re-established before
/// its next use; the request that was using it fails with the retryable `connectionLost`
/// (if `COMMIT` itself was cut off the outcome is unknown to the client, which is why writes
/// are idempotent and safe to retry).
/// - Note: Thread-safe: all state is immutable or confined to the connections' queues.
public final class PostgresStore: Store {
    public let engine = StoreEngine.postgres
    public let configuration: PostgresConfiguration
    private let pool: ConnectionPool

    private init(configuration: PostgresConfiguration, pool: ConnectionPool) {
        self.configuration = configuration
        self.pool = pool
    }

    /// Connects, applies pending migrations under an advisory lock (with `migrate: false`,
    /// refuses a database that lacks some) and refuses a schema newer than this binary.
    public static func open(url: String, migrate: Bool = true) async throws -> PostgresStore {
        try await open(configuration: try PostgresConfiguration(url: url), migrate: migrate)
    }

    /// `observer` hears of each migration applied.
    public static func open(
        configuration: PostgresConfiguration, migrate: Bool = true, observer: MigrationObserver = MigrationObserver()
    ) async throws -> PostgresStore {
        let workers = (0..<configuration.poolSize).map { index in
            ConnectionWorker(label: "storekeeper.postgres.\(index)") { () throws(StoreError) in
                try PostgresConnection(
                    conninfo: configuration.conninfo,
                    statementTimeoutMilliseconds: configuration.statementTimeoutMilliseconds,
                    preparesStatements: configuration.preparedStatements)
            }
        }
        // The migration transactions lift the statement timeout themselves (`Migrator`).
        _ = try await workers[0].run { connection in
            try Migrator.migrate(connection, apply: migrate, observer: observer)
        }
        return PostgresStore(configuration: configuration, pool: ConnectionPool(workers: workers))
    }

    public func read<R: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> R) async throws -> R {
        try await pool.withWorker { worker in
            try await worker.run { connection in
                try Self.transaction(connection, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", body)
            }
        }
    }

    public func readBlocking<R>(_ body: (any StoreReader) throws -> R) throws -> R {
        try pool.withWorkerBlocking { worker in
            try worker.runBlocking { connection in
                try Self.transaction(connection, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", body)
            }
        }
    }

    public func write<R: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> R) async throws -> R {
        try await pool.withWorker { worker in
            try await worker.run { connection in try Self.transaction(connection, begin: "BEGIN", body) }
        }
    }

    static func transaction<R>(
        _ connection: any SQLConnection, begin: String, _ body: (SQLStoreTransaction) throws -> R
    ) throws -> R {
        try SQLStoreTransaction.run(on: connection, begin: begin, body)
    }

    public func close() async {
        await pool.close()
    }
}

/// A parsed `postgres://user:password@host:port/database?pool_size=N&statement_timeout=ms`.
///
/// `pool_size` (default 8), `statement_timeout` (milliseconds, default none) and
/// `prepared_statements` (`on`, the default, or `off`) are Storekeeper's; every other query
/// parameter (`sslmode`, `application_name`, `connect_timeout`, …) goes to libpq unchanged.
/// - Note: Immutable value; `Sendable`.
public struct PostgresConfiguration: Sendable, Hashable {
    /// What libpq receives (a `postgresql://` URI without Storekeeper's options).
    let conninfo: String
    public let poolSize: Int
    public let statementTimeoutMilliseconds: Int?
    /// Whether connections prepare their statements (`PostgresConnection`).
    public let preparedStatements: Bool

    public init(url: String) throws(StoreError) {
        guard var components = URLComponents(string: url),
            components.scheme == "postgres" || components.scheme == "postgresql"
        else {
            throw StoreError(.invalidConfiguration, "not a postgres:// URL")
        }
        var poolSize = 8
        var statementTimeout: Int?
        var preparedStatements = true
        var passed: [URLQueryItem] = []
        for item in components.queryItems ?? [] {
            switch item.name {
            case "pool_size":
                guard let value = item.value.flatMap(Int.init), (1...512).contains(value) else {
                    throw StoreError(.invalidConfiguration, "pool_size must be an integer from 1 to 512")
                }
                poolSize = value
            case "statement_timeout":
                guard let value = item.value.flatMap(Int.init), value >= 0 else {
                    throw StoreError(.invalidConfiguration, "statement_timeout must be milliseconds (an integer ≥ 0)")
                }
                statementTimeout = value
            case "prepared_statements":
                switch item.value {
                case "on": preparedStatements = true
                case "off": preparedStatements = false
                default: throw StoreError(.invalidConfiguration, "prepared_statements must be on or off")
                }
            default:
                passed.append(item)
            }
        }
        components.scheme = "postgresql"
        components.queryItems = passed.isEmpty ? nil : passed
        guard let conninfo = components.string else {
            throw StoreError(.invalidConfiguration, "the postgres:// URL does not re-encode")
        }
        self.conninfo = conninfo
        self.poolSize = poolSize
        self.statementTimeoutMilliseconds = statementTimeout
        self.preparedStatements = preparedStatements
    }
}
