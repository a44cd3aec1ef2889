/// Applies `Migration.all` to one connection, each migration in its own transaction.
///
/// Concurrent migrators (several instances starting at once) serialize: PostgreSQL takes
/// a transaction-scoped advisory lock, SQLite `BEGIN IMMEDIATE` takes the write lock. Each
/// migration re-reads `schema_migrations` under the lock, so it is applied exactly once. A
/// database that lists a migration this binary does not know was migrated by a newer
/// Storekeeper and is refused with `schemaTooNew`.
/// - Note: Stateless; runs on the connection's worker queue.
enum Migrator {
    /// Arbitrary constant naming Storekeeper's migration lock.
    static let advisoryLockKey: Int64 = 0x5354_4F52_454B_4550

    /// Applies what is missing (or, with `apply: false`, only checks) and returns the
    /// identifiers applied now.
    @discardableResult
    static func migrate(
        _ connection: any SQLConnection, migrations: [Migration] = Migration.all, apply: Bool,
        observer: MigrationObserver = MigrationObserver()
    ) throws(StoreError) -> [String] {
        let applied = try inTransaction(connection) { () throws(StoreError) -> Set<String> in
            try connection.executeScript(Migration.bookkeeping)
            return try appliedIdentifiers(connection)
        }
        let known = Set(migrations.map(\.identifier))
        let unknown = applied.subtracting(known).sorted()
        if !unknown.isEmpty {
            throw StoreError(
                .schemaTooNew,
                "the database was migrated by a newer Storekeeper (unknown migrations: "
                    + "\(unknown.joined(separator: ", "))); upgrade this binary or use the newer one")
        }
        let pending = migrations.filter { !applied.contains($0.identifier) }
        if pending.isEmpty { return [] }
        guard apply else {
            throw StoreError(
                .schemaOutdated,
                "the database lacks migrations \(pending.map(\.identifier).joined(separator: ", ")); "
                    + "run `storekeeper migrate --database URL`")
        }
        var appliedNow: [String] = []
        for (index, migration) in pending.enumerated() {
            // Between migrations only: each is one transaction, all or nothing.
            if index > 0, observer.shouldStop() { break }
            // Before the lock: a migrator waiting for another one's is told what it waits to apply.
            observer.starting(migration.identifier, index + 1, pending.count)
            let didApply = try inTransaction(connection) { () throws(StoreError) -> Bool in
                guard try appliedIdentifiers(connection).contains(migration.identifier) == false else { return false }
                do throws(StoreError) {
                    try connection.executeScript(migration.sql(for: connection.dialect))
                } catch {
                    throw StoreError(.migrationFailed, "migration \(migration.identifier) failed: \(error.detail)")
                }
                try connection.execute(recordSQL(connection.dialect), [.text(migration.identifier)])
                return true
            }
            if didApply { appliedNow.append(migration.identifier) }
            observer.applied(migration.identifier, index + 1, pending.count)
        }
        if !appliedNow.isEmpty { connection.forgetSchema() }
        return appliedNow
    }

    static func appliedIdentifiers(_ connection: any SQLConnection) throws(StoreError) -> Set<String> {
        Set(
            try connection.query("SELECT identifier FROM schema_migrations", []).map { row throws(StoreError) in
                try row.text(0)
            })
    }

    /// `applied_at` is bookkeeping, so it takes the database's clock.
    static func recordSQL(_ dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite:
            return """
                INSERT INTO schema_migrations (identifier, applied_at)
                VALUES ($1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
                """
        case .postgres:
            return """
                INSERT INTO schema_migrations (identifier, applied_at)
                VALUES ($1, CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT))
                """
        }
    }

    /// How often a transaction is begun again when the timeout it is about to lift cancels its
    /// first statement.
    static let timeoutLiftAttempts = 5

    /// One transaction holding the migration lock.
    static func inTransaction<R>(
        _ connection: any SQLConnection, _ body: () throws(StoreError) -> R
    ) throws(StoreError) -> R {
        switch connection.dialect {
        case .sqlite:
            try connection.begin("BEGIN IMMEDIATE")
        case .postgres:
            try beginWithoutTimeouts(connection)
        }
        do {
            if connection.dialect == .postgres {
                _ = try connection.query("SELECT pg_advisory_xact_lock($1)", [.integer(advisoryLockKey)])
            }
            let result = try body()
            try connection.commit()
            return result
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Begins a PostgreSQL transaction without a timeout, whatever the role, the database or
    /// the URL set: a migration may rebuild a large table for minutes, or wait that long for
    /// another instance's lock. The statement that lifts them runs under them, and a timeout of a
    /// few milliseconds on a loaded server can cancel even it: nothing is done yet then, so the
    /// transaction is begun again, a few times.
    static func beginWithoutTimeouts(_ connection: any SQLConnection) throws(StoreError) {
        try againOnTimeout { () throws(StoreError) in
            try connection.begin("BEGIN")
            do throws(StoreError) {
                _ = try connection.query(
                    "SELECT set_config('statement_timeout', '0', true), set_config('lock_timeout', '0', true)", [])
            } catch {
                connection.rollback()
                throw error
            }
        }
    }

    /// Runs `body` again when a timeout cancels it, `timeoutLiftAttempts` times in all: for the
    /// statements that set or lift a session's timeouts, which a timeout set on the database or
    /// the role applies to as well. Any other error is thrown at once.
    static func againOnTimeout(_ body: () throws(StoreError) -> Void) throws(StoreError) {
        var attempt = 1
        while true {
            do {
                return try body()
            } catch {
                guard error.code == .timeout, attempt < timeoutLiftAttempts else { throw error }
                attempt += 1
            }
        }
    }
}
