import AppStoreClient
import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import HTTPServer
import SecretSealing
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

@testable import Storage

/// Issue 12's many-instances acceptance, against the simulator on a PostgreSQL database of its
/// own: a real `storekeeper serve` process and an in-process server run the recovery workers
/// side by side; every notification is lost, so the history replay alone finds the refund
/// requests and the job queue answers them. The process is SIGKILLed while it holds leased
/// consumption jobs, and the other server finishes them once the leases run out.
///
/// Exactly once: every job completes, and Apple receives one Send Consumption Information per
/// transaction; the only call that may be repeated is one the killed process had sent but not
/// yet recorded (at least once, as webhooks). The history cursor ends where the last run
/// ended, with no lease left, and every notification of the simulator's history is stored.
@Suite(.serialized) struct RecoveryInstancesKillTests {
    static let available = TestDatabase.postgresURL != nil && ServeProcess.binaryExists
    static let customers = 12
    static let consumptionRoute = "PUT /inApps/v2/transactions/consumption/{transactionId}"
    static let keyId = "KILLKEY001"
    static let issuerId = "00000000-0000-4000-8000-00000000c0de"

    @Test(.enabled(if: available, "needs STOREKEEPER_TEST_POSTGRES_URL and the storekeeper binary"))
    func aKilledInstancesJobsAreFinishedByTheOtherOnceEach() async throws {
        let database = try await OwnDatabase.make(.postgres)
        let authority = try TestSigning.authority(name: "Kill Test App Store")
        let simulator = AppStoreSimulator(
            environment: .sandbox, authority: authority, clock: RealTimeClock(), scale: .calendar,
            transport: URLSessionNotificationTransport(timeout: 5), lossPolicy: NotificationLossPolicy(fraction: 1))
        let simulatorServer = try SimulatorServer(
            simulator: simulator,
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0, threadPoolSize: 2),
            tickInterval: nil)
        let secretsKey = try SecretsKey.generate()
        // Both instances use a fifth of Sandbox's rate: one Send Consumption Information a second
        // each, so a batch of 8 claimed jobs takes 8 s, inside its 10 s lease.
        let instanceSettings: (inout ServerConfiguration) -> Void = { configuration in
            configuration.appStoreRatePercent = 20
            configuration.jobLeaseSeconds = 10
            configuration.historyReplayLeaseSeconds = 4
            configuration.webhookPollMilliseconds = 50
        }
        let harness = try await ServerHarness(
            database: .postgres(database.url), ca: authority,
            connections: LiveAppStoreConnection.factory(clock: .system),
            secrets: StoredSecrets(sealer: SecretSealer(key: secretsKey)), configure: instanceSettings,
            serverClock: .system)
        var serving: ServeProcess?
        var workers: RunningWorkers?
        var failure: (any Error)?
        do {
            let apiKey = try PrivateKey.generateP256()
            let app = try await harness.createApp(settings: [
                "answerConsumptionRequests": true,
                "appStoreConnect": [
                    "keyId": Self.keyId, "issuerId": Self.issuerId, "privateKeyPEM": apiKey.pkcs8PEM,
                    "baseURL": simulatorServer.baseURL.absoluteString,
                ],
            ])
            try await simulator.addApp(
                SimulatedApp(
                    bundleId: app.bundleId, appAppleId: 1_234_567_890,
                    products: [
                        SimulatedProduct(
                            productId: "com.example.monthly", kind: .autoRenewable, groupId: "group",
                            period: .month, prices: [Price(storefront: "USA", currency: "USD", price: 9990)])
                    ],
                    apiKeys: [
                        SimulatedApp.APIKey(
                            keyId: Self.keyId, issuerId: Self.issuerId, publicKeyPEM: apiKey.publicKey.pem)
                    ]))
            // Each customer buys, the app posts the purchase and the customer's consent; then asks
            // Apple for a refund. Every notification is lost: only the history has them.
            var transactions: [String] = []
            for index in 0..<Self.customers {
                let customer = "kill-\(index)"
                await simulator.addCustomer(SimulatedCustomer(id: customer))
                let bought = try await simulator.perform(
                    SimulatorAction.make([
                        "action": "purchase", "customer": customer, "productId": "com.example.monthly",
                    ]))
                transactions.append(try #require(bought.transactionId))
                let signed = try #require(try await simulator.signedTransactions(customer: customer).last)
                let posted = try await harness.request(
                    "POST", "/v1/apps/\(app.appId)/customers/\(customer)/transactions", key: app.publicKey,
                    json: ["signedTransaction": signed])
                #expect(posted.status == 200, "\(posted.text)")
                let consent = try await harness.request(
                    "PUT", "/v1/apps/\(app.appId)/customers/\(customer)/consumption-consent", key: app.publicKey,
                    json: ["consented": true])
                #expect(consent.status == 200, "\(consent.text)")
                _ = try await simulator.perform(
                    SimulatorAction.make([
                        "action": "requestRefund", "customer": customer, "productId": "com.example.monthly",
                    ]))
            }
            let history = await simulator.producedNotifications().filter { $0.bundleId == app.bundleId }
            #expect(history.count == 2 * Self.customers)

            // The process that will be killed starts first and claims jobs.
            let process = try ServeProcess([
                "STOREKEEPER_DATABASE_URL": database.url, "STOREKEEPER_LISTEN": "127.0.0.1:0",
                "STOREKEEPER_SECRETS_KEY": secretsKey.base64, "STOREKEEPER_ACCESS_LOG": "false",
                "STOREKEEPER_APP_STORE_RATE_PERCENT": "20", "STOREKEEPER_JOB_LEASE_SECONDS": "10",
                "STOREKEEPER_HISTORY_REPLAY_LEASE_SECONDS": "4", "STOREKEEPER_WEBHOOK_POLL_MILLISECONDS": "50",
                "STOREKEEPER_WEBHOOK_WORKER": "false", "STOREKEEPER_ACCESS_SCHEDULER": "false",
                "STOREKEEPER_STATUS_POLLING": "false",
            ])
            serving = process
            let claimed = try await DeliveryInstances.until(60) {
                try Self.jobs(database, app.appId).contains { $0.owner != nil }
            }
            try #require(claimed, "the process never claimed a job: \(process.output)")
            // The other instance joins: both replay (one cursor lease at a time) and answer.
            let owner = harness.application.jobWorker.owner
            workers = harness.application.startWorkers()
            // Killed once the whole history is in (every job exists) and answers are under way.
            let started = try await DeliveryInstances.until(60) {
                let calls = await Self.consumptionCalls(simulator).values.reduce(0, +)
                return try Self.jobs(database, app.appId).count == Self.customers && calls >= 3
            }
            try #require(started, "the history was not replayed or no answers were sent: \(process.output)")
            process.kill()
            #expect(process.process.terminationReason == .uncaughtSignal)
            let callsAtKill = await Self.consumptionCalls(simulator)
            let atKill = try Self.jobs(database, app.appId)
            // What the killed process held and had not recorded as done.
            let heldByKilled = atKill.filter { $0.owner != nil && $0.owner != owner && !$0.completed }
            #expect(!heldByKilled.isEmpty, "killed holding no job")

            let finished = try await DeliveryInstances.until(60) {
                try Self.jobs(database, app.appId).allSatisfy(\.completed)
            }
            let left = try Self.jobs(database, app.appId).filter { !$0.completed }
            #expect(finished, "jobs left: \(left)")
            await workers?.stop()
            workers = nil

            let jobs = try Self.jobs(database, app.appId)
            #expect(jobs.count == Self.customers)
            #expect(Set(jobs.map(\.transactionId)) == Set(transactions))
            #expect(jobs.allSatisfy { $0.completed && $0.failedAt == nil && $0.owner == nil })
            let calls = await Self.consumptionCalls(simulator)
            // Sent by the killed process, unrecorded: the only calls allowed twice.
            let unrecorded = Set(heldByKilled.map(\.transactionId)).filter { callsAtKill[$0] != nil }
            #expect(unrecorded.count <= 1, "more than one call in flight at the kill: \(unrecorded)")
            for transaction in transactions {
                let allowed = unrecorded.contains(transaction) ? 1...2 : 1...1
                #expect(
                    allowed.contains(calls[transaction] ?? 0),
                    "\(transaction) answered \(calls[transaction] ?? 0) times")
            }
            for transaction in transactions {
                #expect(await simulator.consumptionInformation(transactionId: transaction) != nil)
            }

            // The cursor: every notification stored once; a last run (once the killed process's
            // lease, if it held one, ran out) covers the window to now and leaves no lease.
            #expect(try await harness.store.read { try $0.notificationCount(appId: app.appId) } == history.count)
            var last: NotificationHistoryReplay.Run?
            for _ in 0..<100 {
                last = await harness.application.historyReplayWorker.runOnce().runs["\(app.appId)/Sandbox"]
                if last?.leased == true { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            let run = try #require(last)
            #expect(run.completed && run.failure == nil)
            #expect(run.replayed == history.count && run.newNotifications == 0 && run.pages == 2)
            let cursor = try #require(
                try await harness.store.read { try $0.historyCursor(appId: app.appId, environment: .sandbox) })
            #expect(cursor.cursorAt == run.endDate)
            #expect(cursor.leaseOwner == nil && cursor.lastError == nil)
        } catch {
            failure = error
        }
        serving?.close()
        await workers?.stop()
        await harness.stop()
        await simulatorServer.stop()
        database.drop()
        if let failure { throw failure }
    }

    /// Send Consumption Information calls the simulator answered, by transaction.
    static func consumptionCalls(_ simulator: AppStoreSimulator) async -> [String: Int] {
        var calls: [String: Int] = [:]
        for (call, count) in await simulator.serverAPICalls() where call.route == consumptionRoute {
            if let id = call.transactionId { calls[id, default: 0] += count }
        }
        return calls
    }

    /// One `consumption_request` job row.
    struct Job: Sendable, CustomStringConvertible {
        var transactionId: String
        var owner: String?
        var completed: Bool
        var failedAt: Int64?
        var description: String { "\(transactionId) owner \(owner ?? "none") completed \(completed)" }
    }

    /// The app's consumption jobs, read straight from the database.
    static func jobs(_ database: OwnDatabase, _ appId: String) throws -> [Job] {
        let rows = try OwnDatabase.query(
            database.url,
            """
            SELECT payload, lease_owner, CASE WHEN completed_at IS NULL THEN 0 ELSE 1 END, failed_at FROM jobs
            WHERE kind = 'consumption_request' AND app_id = $1 ORDER BY id
            """, [.text(appId)])
        return try rows.map { row in
            let payload = try JSONSerialization.jsonObject(with: Data(try row.text(0).utf8)) as? [String: Any]
            return Job(
                transactionId: payload?["transactionId"] as? String ?? "", owner: try row.optionalText(1),
                completed: try row.integer(2) != 0, failedAt: try row.optionalInteger(3))
        }
    }
}

extension SimulatorAction {
    /// An action from its JSON form, as scenario files write it.
    static func make(_ json: [String: Any]) throws -> SimulatorAction {
        try AppStoreJSON.decode(SimulatorAction.self, from: JSONSerialization.data(withJSONObject: json))
    }
}
