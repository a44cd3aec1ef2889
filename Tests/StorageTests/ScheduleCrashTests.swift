import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// The access scheduler killed with SIGKILL while instants are due
/// (`StorekeeperTestProbes schedule`), again and again, then left to finish: every due
/// instant is processed exactly once (one re-evaluation, one EXPIRATION, one outbox row per
/// customer) and nothing stays due.
@Suite(
    "Scheduler crash",
    .enabled(
        if: TestProbes.path != nil,
        "no StorekeeperTestProbes executable beside the tests (set STOREKEEPER_TEST_PROBES)"))
struct ScheduleCrashTests {
    static let customers = 300
    static let maxRounds = 40

    @Test("every due instant is processed once after SIGKILLs", arguments: Backend.enabled)
    func killedWhileInstantsAreDue(backend: Backend) async throws {
        let probe = try #require(TestProbes.path)
        let database = try await TestDatabase.make(backend)
        let dueAt = F.at(100)
        let setup = try await database.open()
        try await F.setUp(
            setup, endpoints: [WebhookEndpoint(id: "e1", appId: F.appId, url: "https://x", secret: "s")])
        for notification in F.notifications(customers: Self.customers, perCustomer: 1, prefix: "k") {
            try await F.ingest(notification, into: setup, now: F.at(1))
        }
        let before = try await F.snapshot(setup)
        await setup.close()

        var killedMidPass = 0
        var finished = false
        for round in 0..<Self.maxRounds where !finished {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: probe)
            process.arguments = [
                "schedule", "--database", database.url, "--now", String(dueAt.millisecondsSince1970),
            ]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            // The last round runs to the end; the others are killed at a random moment once the
            // probe has committed a pass (a fixed delay let a fast pass finish first).
            let text = ChildOutput(output.fileHandleForReading)
            if round < Self.maxRounds - 1 {
                // Polled, not read blocking: a probe stuck before its first pass is killed
                // after ten seconds all the same.
                let deadline = ContinuousClock.now + .seconds(10)
                while process.isRunning, !text.contains("pass "), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(1))
                }
                try await Task.sleep(for: .microseconds(Int.random(in: 0...20_000)))
                if process.isRunning {
                    killedMidPass += 1
                    kill(process.processIdentifier, SIGKILL)
                }
            }
            process.waitUntilExit()
            let finishedText = await text.all()
            finished = finishedText.split(separator: "\n").contains("done")
        }
        #expect(finished, "the scheduler finished")
        #expect(killedMidPass >= 1, "the probe was killed while instants were due")

        let store = try await database.open()
        let after = try await F.snapshot(store)
        let (due, expirations, maxExpirations, versions) = try await store.read { reader in
            (
                try reader.sql(
                    "SELECT COUNT(*) FROM customer_states WHERE valid_until <= $1",
                    .integer(dueAt.millisecondsSince1970))[0].integer(0),
                try reader.sql("SELECT COUNT(*) FROM lifecycle_events WHERE type = 'EXPIRATION'")[0].integer(0),
                try reader.sql(
                    """
                    SELECT COALESCE(MAX(n), 0) FROM (
                        SELECT COUNT(*) AS n FROM lifecycle_events WHERE type = 'EXPIRATION' GROUP BY customer_id) x
                    """)[0].integer(0),
                Set(try reader.sql("SELECT version FROM customer_states").map { try $0.integer(0) })
            )
        }
        #expect(due == 0)
        #expect(expirations == Int64(Self.customers))
        #expect(maxExpirations == 1)
        // Ingested once (version 1), re-evaluated once by the scheduler (version 2).
        #expect(versions == [2])
        #expect(after["lifecycle_events"]! - before["lifecycle_events"]! == Int64(Self.customers))
        #expect(after["lifecycle_events"] == after["webhook_outbox"])
        if let sqlite = store as? SQLiteStore {
            #expect(try await sqlite.integrityCheck() == "ok")
        }
        await store.close()
        await database.drop()
    }
}
