import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Several instances (separate `Store`s, each with its own pool) and several tasks each
/// ingest the same notifications three times in different orders.
@Suite("Concurrent ingestion")
struct ConcurrentIngestionTests {
    @Test("each notification stored once; final states equal the engine's", arguments: Backend.enabled)
    func sameNotificationsThreeTimes(backend: Backend) async throws {
        let customers = 30
        let notifications = F.notifications(customers: customers, perCustomer: 10)
        #expect(notifications.count == 300)
        try await withStore(backend, options: "pool_size=4") { first, database in
            try await F.setUp(
                first, endpoints: [WebhookEndpoint(id: "e1", appId: F.appId, url: "https://x", secret: "s")])
            let second = try await database.open()
            let instances: [any Store] = [first, second]
            var generator = SystemRandomNumberGenerator()
            let deliveries = (0..<3).flatMap { _ in notifications.shuffled(using: &generator) }
            let workersPerInstance = 6
            let workers = instances.count * workersPerInstance
            let newCount = try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<workers {
                    let store = instances[worker % instances.count]
                    let slice = stride(from: worker, to: deliveries.count, by: workers).map { deliveries[$0] }
                    group.addTask {
                        var new = 0
                        for notification in slice where try await F.ingest(notification, into: store) { new += 1 }
                        return new
                    }
                }
                return try await group.reduce(0, +)
            }
            await second.close()
            #expect(newCount == notifications.count)
            #expect(try await first.read { try $0.notificationCount(appId: F.appId) } == notifications.count)

            let byUser = Dictionary(grouping: notifications, by: \.appUserId)
            for (appUserId, own) in byUser {
                let expected = EntitlementEngine.evaluate(
                    customerId: appUserId, environment: .production, facts: own.flatMap(\.facts), catalog: F.catalog,
                    now: F.now)
                let (stored, events) = try await first.read { reader in
                    let customer = try #require(try reader.customer(appId: F.appId, .appUserId(appUserId)))
                    return (
                        try reader.customerInfo(customerId: customer.id, environment: .production),
                        try reader.events(customerId: customer.id, after: nil, limit: 10_000)
                    )
                }
                #expect(stored?.info == expected.customerInfo, "customer \(appUserId)")
                #expect((stored?.version ?? 0) == Int64(own.count), "one version per new notification")
                let ids = events.map(\.event.id)
                #expect(Set(ids).count == ids.count, "no duplicate events for \(appUserId)")
                #expect(Set(expected.allEvents.map(\.id)).isSubset(of: Set(ids)), "every event of \(appUserId)")
            }
            let (events, outbox) = try await first.read {
                (try $0.count("lifecycle_events"), try $0.count("webhook_outbox"))
            }
            #expect(events == outbox)
        }
    }
}

/// PostgreSQL only: a connection killed under the store is replaced; the request that was on
/// it fails cleanly with a retryable error and leaves nothing half-written.
@Suite("PostgreSQL connection loss", .enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage))
struct PostgresConnectionLossTests {
    static func terminate(applicationName: String) throws -> Int {
        let base = try #require(Backend.postgresURL)
        return try PostgresAdmin.query(
            base,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
            [.text(applicationName)]
        ).count
    }

    @Test("an idle connection killed by pg_terminate_backend is re-established")
    func idleConnectionReestablished() async throws {
        let name = "sk-lost-\(UUID().uuidString.prefix(8))"
        try await withStore(.postgres, options: "pool_size=1&application_name=\(name)") { store, _ in
            try await F.setUp(store)
            let notifications = F.notifications(customers: 1, perCustomer: 2)
            try await F.ingest(notifications[0], into: store)
            #expect(try Self.terminate(applicationName: name) == 1)
            try await Task.sleep(for: .milliseconds(100))
            // The next use finds the connection dead: it fails retryably…
            do {
                _ = try await store.read { try $0.notificationCount(appId: F.appId) }
                Issue.record("a terminated connection answered")
            } catch let error as StoreError {
                #expect(error.code == .connectionLost)
                #expect(error.isRetryable)
            }
            // …and the one after reconnects.
            #expect(try await store.read { try $0.notificationCount(appId: F.appId) } == 1)
            #expect(try await F.ingest(notifications[1], into: store))
        }
    }

    @Test("a write in flight fails with connectionLost and nothing of it remains")
    func inFlightWriteFailsCleanly() async throws {
        let name = "sk-lost-\(UUID().uuidString.prefix(8))"
        try await withStore(.postgres, options: "pool_size=1&application_name=\(name)") { store, _ in
            try await F.setUp(store)
            let doomed = F.notifications(customers: 1, perCustomer: 1, prefix: "doomed")[0]
            let write = Task {
                try await store.write { tx in
                    _ = try F.ingest(doomed, in: tx, now: F.now)
                    _ = try tx.sql("SELECT pg_sleep(5)")
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            #expect(try Self.terminate(applicationName: name) == 1)
            do {
                try await write.value
                Issue.record("the write survived its connection")
            } catch let error as StoreError {
                #expect(error.code == .connectionLost)
            }
            // Nothing half-written; the retry (a fresh connection) commits it.
            #expect(try await store.read { try $0.notification(appId: F.appId, uuid: doomed.uuid) } == nil)
            #expect(try await store.read { try $0.count("customers") } == 0)
            #expect(try await F.ingest(doomed, into: store))
            #expect(
                try await store.read { try $0.notification(appId: F.appId, uuid: doomed.uuid)?.outcome } == "processed")
        }
    }

    @Test("every connection runs without JIT compilation (it cost churn's read three times its run)")
    func noJIT() async throws {
        try await withStore(.postgres) { store, _ in
            for _ in 0..<3 {
                let setting = try await store.read { try $0.sql("SELECT current_setting('jit')").first?.text(0) }
                #expect(setting == "off")
            }
        }
    }

    @Test("statement_timeout ends a long statement with a retryable timeout")
    func statementTimeout() async throws {
        try await withStore(.postgres, options: "statement_timeout=200") { store, _ in
            do {
                try await store.read { _ = try $0.sql("SELECT pg_sleep(2)") }
                Issue.record("the statement outlived statement_timeout")
            } catch let error as StoreError {
                #expect(error.code == .timeout)
                #expect(error.isRetryable)
            }
            #expect(try await store.read { try $0.appliedMigrations() } == Migration.all.map(\.identifier))
        }
    }

    /// Migrations run without the store's statement timeout (they were cancelled at it, and the
    /// store did not open: a 1 ms timeout failed the first CREATE TABLE); the store's own
    /// statements keep it.
    /// A timeout set on the database itself (or the role, as behind a pooler) reaches every
    /// connection, the migrating one too: its transactions lift it.
    @Test("migrations run without the database's statement_timeout; the store's statements keep it")
    func migrationsOutliveDatabaseStatementTimeout() async throws {
        let database = try await TestDatabase.make(.postgres)
        do {
            // The name is ours (a UUID), never input.
            let name = String(try #require(URLComponents(string: database.url)?.path.dropFirst()))
            try PostgresAdmin.execute(database.url, "ALTER DATABASE \(name) SET statement_timeout = 1")
            let store = try await database.open()
            do {
                try await store.read { _ = try $0.sql("SELECT pg_sleep(0.5)") }
                Issue.record("the statement outlived the database's statement_timeout")
            } catch let error as StoreError {
                #expect(error.code == .timeout)
            }
            await store.close()
        } catch {
            await database.drop()
            throw error
        }
        await database.drop()
    }

    /// The statement that lifts the timeouts runs under them: a timeout of a few milliseconds on
    /// a loaded server cancelled even it (the test above failed so under a full parallel run),
    /// and the store did not open. The migrator begins such a transaction again.
    @Test("a migration transaction whose timeout lift is itself cancelled is begun again, a few times")
    func cancelledTimeoutLiftIsRetried() async throws {
        let database = try await TestDatabase.make(.postgres)
        defer { Task { await database.drop() } }
        guard case .postgres(let configuration) = try StoreLocation(database.url) else {
            Issue.record("not a PostgreSQL URL: \(database.url)")
            return
        }
        let real = try PostgresConnection(conninfo: configuration.conninfo, statementTimeoutMilliseconds: nil)
        defer { real.close() }
        // Two cancellations: applied all the same.
        let twice = LiftCancellingConnection(real, cancellations: 2)
        #expect(try Migrator.migrate(twice, apply: true) == Migration.all.map(\.identifier))
        #expect(twice.lifts == Migration.all.count + 1 + 2)
        // More than the attempts allow: the timeout is the answer, and nothing was left open.
        let always = LiftCancellingConnection(real, cancellations: Migrator.timeoutLiftAttempts)
        #expect(throws: StoreError.self) { try Migrator.migrate(always, apply: true) }
        #expect(always.lifts == Migrator.timeoutLiftAttempts)
        #expect(!real.inTransaction)
    }

    @Test("migrations run without statement_timeout; the store's statements keep it")
    func migrationsOutliveStatementTimeout() async throws {
        try await withStore(.postgres, options: "statement_timeout=1") { store, _ in
            do {
                try await store.read { _ = try $0.sql("SELECT pg_sleep(0.5)") }
                Issue.record("the statement outlived statement_timeout")
            } catch let error as StoreError {
                #expect(error.code == .timeout)
            }
        }
    }
}

@Suite("Store locations")
struct StoreLocationTests {
    @Test func parses() throws {
        #expect(try StoreLocation("data/store.db") == .sqlite(path: "data/store.db"))
        #expect(try StoreLocation("sqlite:data/store.db") == .sqlite(path: "data/store.db"))
        #expect(try StoreLocation("sqlite:///var/lib/sk.db") == .sqlite(path: "/var/lib/sk.db"))
        guard
            case .postgres(let configuration) = try StoreLocation(
                "postgres://u:p@db:5433/sk?pool_size=3&statement_timeout=250&sslmode=disable")
        else {
            Issue.record("not postgres")
            return
        }
        #expect(configuration.poolSize == 3)
        #expect(configuration.statementTimeoutMilliseconds == 250)
        #expect(configuration.conninfo == "postgresql://u:p@db:5433/sk?sslmode=disable")
        #expect(throws: StoreError.self) { try StoreLocation("postgres://db/sk?pool_size=0") }
        #expect(throws: StoreError.self) { try StoreLocation("mysql://db/sk") }
    }
}

/// Issue 5's acceptance on PostgreSQL: two server-side processes, several tasks each, ingest the
/// same 2,000 notifications, each delivered three times in different orders.
@Suite(
    "Multi-process ingestion",
    .enabled(if: Backend.postgresURL != nil && TestProbes.path != nil, Backend.postgresSkipMessage))
struct MultiProcessIngestionTests {
    @Test("two processes: every notification stored once, states equal the engine's")
    func twoProcesses() async throws {
        let binary = try #require(TestProbes.path)
        let customers = 200
        let notifications = F.notifications(customers: customers, perCustomer: 10)
        #expect(notifications.count == 2_000)
        try await withStore(.postgres) { store, database in
            try await F.setUp(
                store, endpoints: [WebhookEndpoint(id: "e1", appId: F.appId, url: "https://x", secret: "s")])
            let processes = (0..<2).map { index -> (Process, Pipe) in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: binary)
                process.arguments = [
                    "ingest", "--database", database.url, "--customers", "\(customers)",
                    "--per-customer", "10", "--copies", "3", "--process", "\(index)", "--processes", "2",
                    "--tasks", "4", "--seed", "42",
                ]
                let output = Pipe()
                process.standardOutput = output
                return (process, output)
            }
            for (process, _) in processes { try process.run() }
            var new = 0
            for (process, output) in processes {
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
                new += Int(text.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("new ".count)) ?? -1
            }
            #expect(new == notifications.count, "each notification new exactly once across both processes")
            #expect(try await store.read { try $0.notificationCount(appId: F.appId) } == notifications.count)
            for (appUserId, own) in Dictionary(grouping: notifications, by: \.appUserId) {
                let expected = EntitlementEngine.evaluate(
                    customerId: appUserId, environment: .production, facts: own.flatMap(\.facts), catalog: F.catalog,
                    now: F.now)
                let (stored, events) = try await store.read { reader in
                    let customer = try #require(try reader.customer(appId: F.appId, .appUserId(appUserId)))
                    return (
                        try reader.customerInfo(customerId: customer.id, environment: .production),
                        try reader.events(customerId: customer.id, after: nil, limit: 10_000)
                    )
                }
                #expect(stored?.info == expected.customerInfo, "customer \(appUserId)")
                let ids = events.map(\.event.id)
                #expect(Set(ids).count == ids.count, "no duplicate events for \(appUserId)")
                // Events are history: an intermediate state seen before a late fact arrived may
                // add events the final state no longer implies, but none is duplicated or lost.
                #expect(Set(expected.allEvents.map(\.id)).isSubset(of: Set(ids)), "every event of \(appUserId)")
            }
        }
    }
}

/// A PostgreSQL connection whose first `cancellations` timeout lifts fail as a statement timeout
/// would cancel them (after reaching the server: the transaction is aborted).
private final class LiftCancellingConnection: SQLConnection {
    let real: any SQLConnection
    private(set) var lifts = 0
    private let cancellations: Int

    init(_ real: any SQLConnection, cancellations: Int) {
        self.real = real
        self.cancellations = cancellations
    }

    var dialect: SQLDialect { real.dialect }
    var isHealthy: Bool { real.isHealthy }
    var inTransaction: Bool { real.inTransaction }

    func query(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> [SQLRow] {
        if sql.contains("set_config('statement_timeout'") {
            lifts += 1
            if lifts <= cancellations {
                _ = try? real.query("SELECT 1/0", [])
                throw StoreError(.timeout, "canceling statement due to statement timeout (SQLSTATE 57014)")
            }
        }
        return try real.query(sql, arguments)
    }

    func scan(_ sql: String, _ arguments: [SQLValue], _ body: (SQLRowView) throws(StoreError) -> Void)
        throws(StoreError)
    {
        try real.scan(sql, arguments, body)
    }

    func execute(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> Int {
        try real.execute(sql, arguments)
    }

    func executeScript(_ sql: String) throws(StoreError) { try real.executeScript(sql) }
    func begin(_ statement: String) throws(StoreError) { try real.begin(statement) }
    func commit() throws(StoreError) { try real.commit() }
    func rollback() { real.rollback() }
    func close() { real.close() }
}
