import AppStoreModels
import Entitlements
import Foundation
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Synchronization
import Testing

@testable import Storage

/// Issue 13: a change of an app's commission terms queues a rebuild of its aggregates as a
/// leased `analytics_rebuild` job instead of recomputing them inside the `PUT` (docs/analytics.md).
/// Two job workers stand for two instances on one database (SQLite, and PostgreSQL): 250
/// customers whose facts have no aggregates yet are rebuilt 100 per batch.
/// - A second `PUT` while the first rebuild runs supersedes it: the first stops at its next
///   batch, the second instance could not claim it meanwhile, and the aggregates end with the
///   last terms' proceeds.
/// - An instance that stops mid-rebuild (frozen after its first batch, its lease left) is taken
///   over by the other once the lease runs out, which goes on from the recorded position.
@Suite struct AnalyticsRebuildJobTests {
    static let customers = 250
    static let day = UnaggregatedCustomers.day
    static let lease: Int64 = 10_000
    static let now = UnaggregatedCustomers.december.adding(milliseconds: 40 * day)

    @Test func aSecondChangeSupersedesTheRunningRebuildOnSQLite() async throws { try await supersede(.sqlite) }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func aSecondChangeSupersedesTheRunningRebuildOnPostgreSQL() async throws {
        let (database, drop) = try TestDatabase.ownPostgres()
        try await supersede(database, drop: drop)
    }

    @Test func aStoppedInstancesRebuildIsFinishedByAnotherOnSQLite() async throws { try await takeOver(.sqlite) }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func aStoppedInstancesRebuildIsFinishedByAnotherOnPostgreSQL() async throws {
        let (database, drop) = try TestDatabase.ownPostgres()
        try await takeOver(database, drop: drop)
    }

    /// What one instance's rebuild runs reported, and a gate that holds it after its first batch.
    private final class Instance: Sendable {
        let reports = Mutex<[Int64]>([])
        let holdAfterFirstBatch: Bool
        let released = Mutex(false)

        init(holdAfterFirstBatch: Bool) { self.holdAfterFirstBatch = holdAfterFirstBatch }

        func batchDone(_ rebuild: AnalyticsRebuildRecord) async {
            let first = reports.withLock {
                $0.append(rebuild.customersDone)
                return $0.count == 1
            }
            guard holdAfterFirstBatch, first else { return }
            while !released.withLock({ $0 }), !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
        }

        /// Waits (generously, for a loaded machine) until `count` batches were reported.
        func waitForReports(_ count: Int) async {
            let deadline = ContinuousClock.now + .seconds(60)
            while reports.withLock({ $0.count < count }), ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    private struct World {
        let harness: ServerHarness
        let app: ServerHarness.AppKeys
        var base: String { "/v1/apps/\(app.appId)" }

        /// A job worker of its own (another instance), with its own owner and the test's lease.
        func instance(_ owner: String, _ observer: Instance) -> JobWorker {
            let clock = ServerClock(now: harness.clock.function)
            return JobWorker(
                store: harness.store,
                handlers: [
                    AnalyticsRebuildJob(
                        store: harness.store, clock: clock, leaseMilliseconds: AnalyticsRebuildJobTests.lease,
                        batchSize: 100, afterBatch: { await observer.batchDone($0) })
                ],
                clock: clock, metrics: harness.application.metrics,
                settings: JobWorker.Settings(leaseMilliseconds: AnalyticsRebuildJobTests.lease, random: { 0.5 }),
                owner: owner)
        }

        func put(standard: Int, reduced: Int) async throws -> (status: Int, rebuild: [String: Any], location: String?) {
            let response = try await harness.request(
                "PUT", "\(base)/analytics-settings", key: ServerHarness.adminKey,
                json: ["commissionRates": ["default": ["standard": standard, "reduced": reduced]]])
            return (response.status, response.json["rebuild"] as? [String: Any] ?? [:], response.header("Location"))
        }

        func status(_ id: Int) async throws -> [String: Any] {
            let response = try await harness.request(
                "GET", "\(base)/analytics-rebuilds/\(id)", key: ServerHarness.adminKey)
            #expect(response.status == 200, "\(response.text)")
            return response.json
        }
    }

    private func world(_ database: TestDatabase) async throws -> World {
        let harness = try await ServerHarness(database: database)
        harness.clock.set(Self.now)
        let app = try await harness.createApp()
        try await UnaggregatedCustomers.store(Self.customers, appId: app.appId, idPrefix: "80", in: harness.store)
        return World(harness: harness, app: app)
    }

    /// The aggregates equal a fresh computation from every customer's facts under the stored
    /// terms, and the December proceeds are those of `proceedsEach` per customer.
    private func expectAggregatesFromFacts(_ world: World, proceedsEach: Int64) async throws {
        let (rows, expected, customers) = try await UnaggregatedCustomers.rows(
            appId: world.app.appId, now: Self.now, in: world.harness.store)
        #expect(customers == Self.customers)
        #expect(rows == expected)
        let revenue = try await world.harness.request(
            "GET", "\(world.base)/analytics/revenue?environment=Sandbox&from=2025-12-01&to=2025-12-31&resolution=month",
            key: world.app.secretKey)
        let points = revenue.json["points"] as? [[String: Any]] ?? []
        let usd = (points.first?["byCurrency"] as? [[String: Any]])?.first ?? [:]
        #expect(usd["gross"] as? Int == Self.customers * UnaggregatedCustomers.price)
        #expect(usd["proceeds"] as? Int == Self.customers * Int(proceedsEach))
    }

    private func supersede(_ database: TestDatabase, drop: @escaping @Sendable () -> Void = {}) async throws {
        let world = try await world(database)
        defer {
            Task {
                await world.harness.stop()
                drop()
            }
        }
        // 20 %: the first terms. 202 with where to watch; nothing recomputed yet.
        let first = try await world.put(standard: 2000, reduced: 1000)
        #expect(first.status == 202)
        let firstId = try #require(first.rebuild["id"] as? Int)
        #expect(first.rebuild["status"] as? String == "queued")
        #expect(first.location == "\(world.base)/analytics-rebuilds/\(firstId)")
        #expect(first.rebuild["href"] as? String == first.location)
        let appId = world.app.appId
        #expect(try await world.harness.store.read { try $0.analyticsRows(appId: appId) }.isEmpty)

        let a = Instance(holdAfterFirstBatch: true)
        let instanceA = world.instance("instance-a", a)
        let runA = Task { await instanceA.runDue() }
        await a.waitForReports(1)
        #expect(a.reports.withLock { $0 } == [100])
        let running = try await world.status(firstId)
        #expect(running["status"] as? String == "running")
        #expect(running["customersDone"] as? Int == 100)
        #expect(running["customersTotal"] as? Int == Self.customers)
        #expect(running["attempts"] as? Int == 1)
        #expect(running["changed"] is NSNull)

        // The other instance cannot take the rebuild while A's lease runs: never two at once.
        let b = Instance(holdAfterFirstBatch: false)
        let instanceB = world.instance("instance-b", b)
        #expect(await instanceB.runDue() == 0)

        // 25 %: the last terms win. The first rebuild is superseded, A stops at its next batch.
        let second = try await world.put(standard: 2500, reduced: 1250)
        #expect(second.status == 202)
        let secondId = try #require(second.rebuild["id"] as? Int)
        #expect(secondId != firstId)
        let superseded = try await world.status(firstId)
        #expect(superseded["status"] as? String == "superseded")
        #expect(superseded["supersededBy"] as? Int == secondId)
        a.released.withLock { $0 = true }
        #expect(await runA.value == 1)
        #expect(a.reports.withLock { $0 } == [100])
        #expect(try await world.status(firstId)["customersDone"] as? Int == 100)

        #expect(await instanceB.runDue() == 1)
        #expect(b.reports.withLock { $0 } == [100, 200, 250, 250])
        let done = try await world.status(secondId)
        #expect(done["status"] as? String == "completed")
        #expect(done["customersDone"] as? Int == Self.customers)
        #expect(done["customersTotal"] as? Int == Self.customers)
        #expect(done["settingsVersion"] as? Int == 2)
        #expect(done["changed"] as? Bool == true)
        #expect(done["error"] is NSNull)
        let latest = try await world.harness.request(
            "GET", "\(world.base)/analytics-rebuilds/latest", key: ServerHarness.adminKey)
        #expect(latest.json["id"] as? Int == secondId)
        #expect(await instanceB.runDue() == 0)
        // 9.99 at 25 %: 7492.5 → 7493 (the first terms would have given 7992).
        try await expectAggregatesFromFacts(world, proceedsEach: 7493)

        // A change that leaves the commission terms alone recomputes nothing: 200, no rebuild.
        let currencyOnly = try await world.harness.request(
            "PUT", "\(world.base)/analytics-settings", key: ServerHarness.adminKey,
            json: [
                "reportingCurrency": "USD", "commissionRates": ["default": ["standard": 2500, "reduced": 1250]],
            ])
        #expect(currencyOnly.status == 200)
        #expect(currencyOnly.json["rebuild"] is NSNull)
        #expect(currencyOnly.header("Location") == nil)
        let unknown = try await world.harness.request(
            "GET", "\(world.base)/analytics-rebuilds/99999", key: ServerHarness.adminKey)
        #expect(unknown.status == 404)
        #expect(unknown.errorCode == "analytics_rebuild_not_found")
        let secretKey = try await world.harness.request(
            "GET", "\(world.base)/analytics-rebuilds/\(secondId)", key: world.app.secretKey)
        #expect(secretKey.status == 403)
    }

    private func takeOver(_ database: TestDatabase, drop: @escaping @Sendable () -> Void = {}) async throws {
        let world = try await world(database)
        defer {
            Task {
                await world.harness.stop()
                drop()
            }
        }
        let put = try await world.put(standard: 2000, reduced: 1000)
        #expect(put.status == 202)
        let id = try #require(put.rebuild["id"] as? Int)

        // A stops after its first batch as a killed instance would: its lease stays.
        let a = Instance(holdAfterFirstBatch: true)
        let instanceA = world.instance("instance-a", a)
        let runA = Task { await instanceA.runDue() }
        await a.waitForReports(1)
        runA.cancel()
        #expect(await runA.value == 1)
        let stopped = try await world.status(id)
        #expect(stopped["status"] as? String == "running")
        #expect(stopped["customersDone"] as? Int == 100)

        let b = Instance(holdAfterFirstBatch: false)
        let instanceB = world.instance("instance-b", b)
        #expect(await instanceB.runDue() == 0)
        world.harness.clock.advance(milliseconds: Self.lease - 1)
        #expect(await instanceB.runDue() == 0)
        // Once the lease has run out B takes it over from customer 101, not from the start.
        world.harness.clock.advance(milliseconds: 1)
        #expect(await instanceB.runDue() == 1)
        #expect(b.reports.withLock { $0 } == [200, 250, 250])
        let done = try await world.status(id)
        #expect(done["status"] as? String == "completed")
        #expect(done["customersDone"] as? Int == Self.customers)
        #expect(done["customersTotal"] as? Int == Self.customers)
        #expect(done["attempts"] as? Int == 2)
        #expect(done["contributionsChanged"] as? Int == Self.customers)
        #expect(done["rowsRepaired"] as? Int == 0)
        // 9.99 at 20 %: 7992.
        try await expectAggregatesFromFacts(world, proceedsEach: 7992)
    }
}
