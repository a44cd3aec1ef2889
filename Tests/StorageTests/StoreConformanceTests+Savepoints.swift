import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// `withSavepoint`: the part of a transaction that failed is undone, the rest commits.
extension StoreConformanceTests {
    /// Whether each notification's ingestion is in the store: the notification and its customer.
    static func stored(_ notifications: [IngestionWorkload.Notification], in store: any Store) async throws -> [Bool] {
        try await store.read { reader in
            try notifications.map { notification in
                let found = try reader.notification(appId: F.appId, uuid: notification.uuid) != nil
                let customer = try reader.customer(appId: F.appId, .appUserId(notification.appUserId)) != nil
                #expect(found == customer, "\(notification.uuid): notification and customer go together")
                return found
            }
        }
    }

    @Test("a savepoint that throws undoes its own writes only", arguments: Backend.enabled)
    func savepointUndoesItsOwnWrites(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(
                store, endpoints: [WebhookEndpoint(id: "e1", appId: F.appId, url: "https://x", secret: "s")])
            let all = F.notifications(customers: 3, perCustomer: 1)
            let (before, doomed, after) = (all[0], all[1], all[2])
            let kept = try await store.write { tx -> Int in
                #expect(try F.ingest(before, in: tx, now: F.now))
                #expect(throws: Planted.self) {
                    try tx.withSavepoint { () throws in
                        #expect(try F.ingest(doomed, in: tx, now: F.now))
                        try tx.appendAudit(NewAuditEntry(at: F.now, actor: "test", action: "doomed", appId: F.appId))
                        throw Planted()
                    }
                }
                #expect(try F.ingest(after, in: tx, now: F.now))
                return try tx.withSavepoint { 42 }
            }
            #expect(kept == 42, "the body's value comes back")
            #expect(try await Self.stored([before, doomed, after], in: store) == [true, false, true])
            let counts = try await F.snapshot(store)
            #expect(counts["notifications"] == 2)
            #expect(counts["signed_transactions"] == 2)
            #expect(counts["customer_states"] == 2)
            #expect(counts["audit_log"] == 0)
            #expect(counts["webhook_outbox"] == counts["lifecycle_events"])
            // Nothing of the undone ingestion lingers: it is new when it arrives again.
            #expect(try await F.ingest(doomed, into: store))
            #expect(try await Self.stored([doomed], in: store) == [true])
        }
    }

    /// `requireOpen`: what a group commit checks after a failed savepoint. A transaction the
    /// database ended on its own (SQLite rolls back after some I/O and memory errors; here a
    /// raw `ROLLBACK` stands in for that) or a failed statement aborted (PostgreSQL) is refused,
    /// so no later statement runs outside it; one restored to its savepoint is open.
    @Test("a transaction the database ended or aborted is not open", arguments: Backend.enabled)
    func requireOpenRefusesAnEndedTransaction(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            await #expect(throws: Planted.self) {
                try await store.write { tx in
                    try tx.requireOpen()
                    #expect(throws: StoreError.self) {
                        try tx.withSavepoint { () throws in _ = try tx.sql("SELECT * FROM no_such_table") }
                    }
                    try tx.requireOpen()
                    let connection = (tx as! SQLStoreTransaction).connection
                    switch backend {
                    case .sqlite: try connection.executeScript("ROLLBACK")
                    case .postgres: #expect(throws: StoreError.self) { try connection.executeScript("SELECT 1/0") }
                    }
                    #expect(throws: StoreError.self) { try tx.requireOpen() }
                    throw Planted()
                }
            }
        }
    }

    /// The connection itself refuses every statement once SQLite ended the transaction (a raw
    /// `ROLLBACK` stands in for an I/O or memory error again): without that, SQLite ran each
    /// later statement as a transaction of its own, so writes issued after the failure
    /// committed while the write was reported failed.
    @Test("no statement runs after SQLite ended the transaction on its own")
    func statementsAfterAnEndedTransactionAreRefused() async throws {
        try await withStore(.sqlite) { store, _ in
            await #expect(throws: Planted.self) {
                try await store.write { tx in
                    let connection = (tx as! SQLStoreTransaction).connection
                    try connection.executeScript("ROLLBACK")
                    let refused = #expect(throws: StoreError.self) {
                        try tx.appendAudit(NewAuditEntry(at: F.now, actor: "test", action: "late", appId: F.appId))
                    }
                    #expect(refused?.code == .database)
                    #expect(
                        refused?.detail.hasSuffix(
                            "the database ended the transaction (it was rolled back): nothing was kept")
                            == true, "\(String(describing: refused))")
                    // A savepoint would otherwise have begun a transaction of its own and its
                    // release committed it.
                    #expect(throws: StoreError.self) {
                        try tx.withSavepoint {
                            try tx.appendAudit(
                                NewAuditEntry(at: F.now, actor: "test", action: "in a savepoint", appId: F.appId))
                        }
                    }
                    throw Planted()
                }
            }
            #expect(try await F.snapshot(store)["audit_log"] == 0)
            // The connection is usable for the next write.
            _ = try await store.write { tx in
                try tx.appendAudit(NewAuditEntry(at: F.now, actor: "test", action: "next", appId: F.appId))
            }
            #expect(try await F.snapshot(store)["audit_log"] == 1)
        }
    }

    /// `begin` on a connection an earlier caller left inside a transaction (a raw `BEGIN` here)
    /// rolls that back instead of failing: otherwise every later `BEGIN` on the pooled SQLite
    /// connection failed ("cannot start a transaction within a transaction"), and on PostgreSQL
    /// the new transaction was the old one, with its writes.
    @Test("begin recovers a connection left inside a transaction", arguments: Backend.enabled)
    func beginRecoversAConnectionLeftInATransaction(backend: Backend) async throws {
        let database = try await TestDatabase.make(backend)
        defer { Task { await database.drop() } }
        let connection = try PerAppKeysMigrationTests.connect(database)
        defer { connection.close() }
        try connection.executeScript("CREATE TABLE begin_probe (x INTEGER)")
        try connection.executeScript("BEGIN")
        try connection.execute("INSERT INTO begin_probe VALUES (1)", [])
        try connection.begin("BEGIN")
        try connection.execute("INSERT INTO begin_probe VALUES (2)", [])
        try connection.commit()
        #expect(try connection.query("SELECT x FROM begin_probe", []).map { try $0.integer(0) } == [2])
        #expect(!connection.inTransaction)
    }

    /// A connection lost mid-transaction is reported as such (retryable: the group runs again on
    /// a fresh connection), not as a transaction the database ended.
    @Test(
        "a transaction whose connection was lost is not open, and says so",
        .enabled(if: Backend.postgresURL != nil, "needs STOREKEEPER_TEST_POSTGRES_URL"))
    func requireOpenReportsALostConnection() async throws {
        try await withStore(.postgres) { store, _ in
            await #expect(throws: Planted.self) {
                try await store.write { tx in
                    let connection = (tx as! SQLStoreTransaction).connection
                    #expect(throws: StoreError.self) {
                        try connection.executeScript("SELECT pg_terminate_backend(pg_backend_pid())")
                    }
                    #expect(throws: StoreError.self) { try tx.requireOpen() }
                    do {
                        try tx.requireOpen()
                    } catch let error as StoreError {
                        #expect(error.code == .connectionLost)
                        #expect(error.isRetryable)
                    }
                    throw Planted()
                }
            }
            // The store replaced the connection.
            let apps = try await store.read { try $0.apps().count }
            #expect(apps == 0)
        }
    }

    @Test("a failed statement inside a savepoint leaves the transaction usable", arguments: Backend.enabled)
    func savepointSurvivesStatementErrors(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let notifications = F.notifications(customers: 4, perCustomer: 1)
            let migration = try #require(Migration.all.first?.identifier)
            try await store.write { tx in
                #expect(try F.ingest(notifications[0], in: tx, now: F.now))
                // A unique violation: on PostgreSQL it aborts the transaction unless rolled back
                // to the savepoint.
                do {
                    try tx.withSavepoint { () throws in
                        #expect(try F.ingest(notifications[1], in: tx, now: F.now))
                        _ = try tx.sql(
                            "INSERT INTO schema_migrations (identifier, applied_at) VALUES ($1, $2)", .text(migration),
                            .integer(0))
                    }
                    Issue.record("a duplicate migration identifier was accepted")
                } catch let error as StoreError {
                    #expect(error.code == .duplicate)
                }
                #expect(try F.ingest(notifications[2], in: tx, now: F.now))
                // Any other SQL error too.
                do {
                    try tx.withSavepoint { _ = try tx.sql("SELECT no_such_column FROM customers") }
                    Issue.record("a statement naming a missing column ran")
                } catch let error as StoreError {
                    #expect(error.code == .database)
                }
                #expect(try F.ingest(notifications[3], in: tx, now: F.now))
            }
            #expect(try await Self.stored(notifications, in: store) == [true, false, true, true])
            #expect(try await store.read { try $0.count("schema_migrations") } == Int64(Migration.all.count))
        }
    }

    @Test("savepoints nest: each level undoes only what it wrote", arguments: Backend.enabled)
    func savepointsNest(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let n = F.notifications(customers: 6, perCustomer: 1)
            try await store.write { tx in
                #expect(try F.ingest(n[0], in: tx, now: F.now))
                try tx.withSavepoint { () throws in
                    #expect(try F.ingest(n[1], in: tx, now: F.now))
                    // An inner level fails: only its write goes.
                    #expect(throws: Planted.self) {
                        try tx.withSavepoint { () throws in
                            #expect(try F.ingest(n[2], in: tx, now: F.now))
                            throw Planted()
                        }
                    }
                    // A level that fails after its own inner level succeeded takes that one along.
                    #expect(throws: Planted.self) {
                        try tx.withSavepoint { () throws in
                            try tx.withSavepoint { () throws in #expect(try F.ingest(n[3], in: tx, now: F.now)) }
                            throw Planted()
                        }
                    }
                    #expect(try F.ingest(n[4], in: tx, now: F.now))
                }
                // A SQL error deep inside unwinds every level it passes through.
                #expect(throws: StoreError.self) {
                    try tx.withSavepoint { () throws in
                        #expect(try F.ingest(n[5], in: tx, now: F.now))
                        try tx.withSavepoint { _ = try tx.sql("SELECT * FROM no_such_table") }
                    }
                }
            }
            #expect(try await Self.stored(n, in: store) == [true, true, false, false, true, false])
        }
    }
}
