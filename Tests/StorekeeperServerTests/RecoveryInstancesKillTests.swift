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
            let app = try await Self.connectApp(
                harness, simulator, simulatorServer, settings: ["answerConsumptionRequests": true])
            // Each customer buys, the app posts the purchase and the customer's consent; then asks
            // Apple for a refund. Every notification is lost: only the history has them.
            var transactions: [String] = []
            for index in 0..<Self.customers {
                let customer = "kill-\(index)"
                let signed = try await Self.buyAndPost(customer, harness, simulator, app)
                transactions.append(
                    try #require(UnverifiedJWS.payload(signed, as: JWSTransactionDecodedPayload.self)?.transactionId))
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
            // Killed once the whole history is in (every job exists), answers are under way and it
            // holds jobs it has not recorded as done: read while the process is frozen (SIGSTOP), so
            // it cannot finish them between the reading and the kill.
            var heldByKilled: [Job] = []
            let started = try await DeliveryInstances.until(60) {
                let calls = await Self.consumptionCalls(simulator).values.reduce(0, +)
                guard try Self.jobs(database, app.appId).count == Self.customers && calls >= 3 else { return false }
                process.pause()
                heldByKilled = try Self.jobs(database, app.appId).filter {
                    $0.owner != nil && $0.owner != owner && !$0.completed
                }
                if heldByKilled.isEmpty { process.resume() }
                return !heldByKilled.isEmpty
            }
            try #require(started, "the history was not replayed or the process held no job: \(process.output)")
            // A call the process sent just before it froze is counted by the simulator by now.
            try await Task.sleep(for: .milliseconds(300))
            let callsAtKill = await Self.consumptionCalls(simulator)
            process.kill()
            #expect(process.process.terminationReason == .uncaughtSignal)

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

    /// Status polling with two instances, one SIGKILLed while it holds a claimed batch: every
    /// subscription whose expiry went unheard is polled, the dead instance's batch by the other
    /// once its lease runs out, and Apple is asked once per subscription (twice at most for the
    /// one poll in flight at the kill). The history replay is off: the polls alone must find
    /// the expiries.
    @Test(.enabled(if: available, "needs STOREKEEPER_TEST_POSTGRES_URL and the storekeeper binary"))
    func aKilledInstancesPollingBatchIsPolledByTheOtherOnce() async throws {
        let database = try await OwnDatabase.make(.postgres)
        let authority = try TestSigning.authority(name: "Poll Kill Test App Store")
        // A month of 12 s: the subscriptions, auto-renew off, expire while both instances run.
        let simulator = AppStoreSimulator(
            environment: .sandbox, authority: authority, clock: RealTimeClock(), scale: .accelerated(monthSeconds: 12),
            transport: URLSessionNotificationTransport(timeout: 5), lossPolicy: NotificationLossPolicy(fraction: 1))
        let simulatorServer = try SimulatorServer(
            simulator: simulator,
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0, threadPoolSize: 2),
            tickInterval: .milliseconds(200))
        let secretsKey = try SecretsKey.generate()
        // A fifth of Sandbox's rate: one Get All Subscription Statuses a second per instance, so a
        // claim takes 5 subscriptions (half the 10 s lease).
        let instanceSettings: (inout ServerConfiguration) -> Void = { configuration in
            configuration.appStoreRatePercent = 20
            configuration.statusPollingLeaseSeconds = 10
            configuration.statusPollingIntervalSeconds = 1
            configuration.statusPollingExpiryDelaySeconds = 0
            configuration.historyReplay = false
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
            let app = try await Self.connectApp(harness, simulator, simulatorServer, settings: [:])
            // Each customer buys, the app posts the purchase, the customer turns auto-renew off;
            // the expiry's notification is lost.
            var originals: [String] = []
            for index in 0..<Self.customers {
                let customer = "poll-kill-\(index)"
                let signed = try await Self.buyAndPost(customer, harness, simulator, app)
                originals.append(
                    try #require(
                        UnverifiedJWS.payload(signed, as: JWSTransactionDecodedPayload.self)?.originalTransactionId))
                _ = try await simulator.perform(
                    SimulatorAction.make([
                        "action": "setAutoRenew", "customer": customer, "productId": "com.example.monthly",
                        "enabled": false,
                    ]))
            }
            #expect(try Self.watch(database, app.appId).count == Self.customers)
            // Completing a posted purchase asks for its statuses too: polls are counted from here.
            let callsBefore = await Self.statusCalls(simulator)
            let polls = { @Sendable () async -> [String: Int] in
                await Self.statusCalls(simulator).merging(callsBefore.mapValues { -$0 }, uniquingKeysWith: +)
                    .filter { $0.value != 0 }
            }

            let process = try ServeProcess([
                "STOREKEEPER_DATABASE_URL": database.url, "STOREKEEPER_LISTEN": "127.0.0.1:0",
                "STOREKEEPER_SECRETS_KEY": secretsKey.base64, "STOREKEEPER_ACCESS_LOG": "false",
                "STOREKEEPER_APP_STORE_RATE_PERCENT": "20", "STOREKEEPER_STATUS_POLLING_LEASE_SECONDS": "10",
                "STOREKEEPER_STATUS_POLLING_INTERVAL_SECONDS": "1",
                "STOREKEEPER_STATUS_POLLING_EXPIRY_DELAY_SECONDS": "0", "STOREKEEPER_HISTORY_REPLAY": "false",
                "STOREKEEPER_WEBHOOK_POLL_MILLISECONDS": "50",
            ])
            serving = process
            let owner = harness.application.statusPollingWorker.owner
            let claimed = try await DeliveryInstances.until(60) {
                try Self.watch(database, app.appId).contains { $0.owner != nil && $0.owner != owner }
            }
            try #require(claimed, "the process never claimed a poll: \(process.output)")
            workers = harness.application.startWorkers()
            // Killed while it holds a live lease on polls it has not finished, a few polls in. The
            // process is frozen (SIGSTOP) while the lease is read, so it cannot finish its batch
            // between the reading and the kill; a batch found finished is resumed and waited on.
            var heldByKilled: [Watch] = []
            let holding = try await DeliveryInstances.until(60) {
                let calls = await polls().values.reduce(0, +)
                let now = Timestamp.now.millisecondsSince1970
                let live = try Self.watch(database, app.appId).contains {
                    $0.owner != nil && $0.owner != owner && ($0.leaseExpiresAt ?? 0) > now + 2_000
                }
                guard calls >= 3 && live else { return false }
                process.pause()
                heldByKilled = try Self.watch(database, app.appId).filter {
                    $0.owner != nil && $0.owner != owner
                        && ($0.leaseExpiresAt ?? 0) > Timestamp.now.millisecondsSince1970
                }
                if heldByKilled.isEmpty { process.resume() }
                return !heldByKilled.isEmpty
            }
            try #require(holding, "the process held no batch while polls were under way: \(process.output)")
            // A call the process sent just before it froze is counted by the simulator by now.
            try await Task.sleep(for: .milliseconds(300))
            let callsAtKill = await polls()
            process.kill()
            #expect(process.process.terminationReason == .uncaughtSignal)

            // Done: every subscription's poll answer is stored and nothing is leased by the
            // survivor (the dead one's leases, if a poll it committed made its row not due, may
            // stay behind, expired).
            let finished = try await DeliveryInstances.until(90) {
                try Self.polledRenewals(database, app.appId).count == Self.customers
                    && Self.watch(database, app.appId).allSatisfy { $0.owner != owner }
            }
            let missing = Set(originals).subtracting(try Self.polledRenewals(database, app.appId).keys)
            #expect(finished, "not polled: \(missing)")
            await workers?.stop()
            workers = nil

            let renewals = try Self.polledRenewals(database, app.appId)
            #expect(Set(renewals.keys) == Set(originals))
            let calls = await polls()
            // Asked by the killed process, unrecorded: the only subscriptions asked twice.
            let unrecorded = Set(heldByKilled.map(\.originalTransactionId)).filter { callsAtKill[$0] != nil }
            #expect(unrecorded.count <= 1, "more than one poll in flight at the kill: \(unrecorded)")
            for original in originals {
                let allowed = unrecorded.contains(original) ? 1...2 : 1...1
                #expect(allowed.contains(calls[original] ?? 0), "\(original) polled \(calls[original] ?? 0) times")
                #expect(allowed.contains(renewals[original] ?? 0), "\(original) stored \(renewals[original] ?? 0)")
            }
            let polledBySurvivor = try Self.watch(database, app.appId).filter { $0.polledAt != nil }.count
            #expect(polledBySurvivor >= heldByKilled.count - unrecorded.count)
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

    /// Get All Subscription Statuses calls the simulator answered, by transaction id asked.
    static func statusCalls(_ simulator: AppStoreSimulator) async -> [String: Int] {
        var calls: [String: Int] = [:]
        for (call, count) in await simulator.serverAPICalls()
        where call.route == "GET /inApps/v1/subscriptions/{transactionId}" {
            if let id = call.transactionId { calls[id, default: 0] += count }
        }
        return calls
    }

    /// One `subscription_watch` row.
    struct Watch: Sendable {
        var originalTransactionId: String
        var owner: String?
        var leaseExpiresAt: Int64?
        var polledAt: Int64?
    }

    static func watch(_ database: OwnDatabase, _ appId: String) throws -> [Watch] {
        try OwnDatabase.query(
            database.url,
            """
            SELECT original_transaction_id, lease_owner, lease_expires_at, last_polled_at FROM subscription_watch
            WHERE app_id = $1 ORDER BY original_transaction_id
            """, [.text(appId)]
        ).map { row in
            Watch(
                originalTransactionId: try row.text(0), owner: try row.optionalText(1),
                leaseExpiresAt: try row.optionalInteger(2), polledAt: try row.optionalInteger(3))
        }
    }

    /// Renewal infos stored from polls, counted by original transaction.
    static func polledRenewals(_ database: OwnDatabase, _ appId: String) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try OwnDatabase.query(
            database.url,
            "SELECT original_transaction_id FROM signed_renewal_infos WHERE app_id = $1 AND source = 'poll'",
            [.text(appId)])
        {
            counts[try row.text(0), default: 0] += 1
        }
        return counts
    }

    /// Creates the harness's app with an App Store Connect key pointing at the simulator, and
    /// the same app (the monthly product, the key) in the simulator.
    static func connectApp(
        _ harness: ServerHarness, _ simulator: AppStoreSimulator, _ simulatorServer: SimulatorServer,
        settings: [String: Any]
    ) async throws -> ServerHarness.AppKeys {
        let apiKey = try PrivateKey.generateP256()
        var appSettings = settings
        appSettings["appStoreConnect"] = [
            "keyId": keyId, "issuerId": issuerId, "privateKeyPEM": apiKey.pkcs8PEM,
            "baseURL": simulatorServer.baseURL.absoluteString,
        ]
        let app = try await harness.createApp(settings: appSettings)
        try await simulator.addApp(
            SimulatedApp(
                bundleId: app.bundleId, appAppleId: 1_234_567_890,
                products: [
                    SimulatedProduct(
                        productId: "com.example.monthly", kind: .autoRenewable, groupId: "group",
                        period: .month, prices: [Price(storefront: "USA", currency: "USD", price: 9990)])
                ],
                apiKeys: [SimulatedApp.APIKey(keyId: keyId, issuerId: issuerId, publicKeyPEM: apiKey.publicKey.pem)]))
        return app
    }

    /// A new customer buys the monthly product in the simulator and the app posts the signed
    /// transaction; returns it.
    static func buyAndPost(
        _ customer: String, _ harness: ServerHarness, _ simulator: AppStoreSimulator, _ app: ServerHarness.AppKeys
    ) async throws -> String {
        await simulator.addCustomer(SimulatedCustomer(id: customer))
        _ = try await simulator.perform(
            SimulatorAction.make(["action": "purchase", "customer": customer, "productId": "com.example.monthly"]))
        let signed = try #require(try await simulator.signedTransactions(customer: customer).last)
        let posted = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/\(customer)/transactions", key: app.publicKey,
            json: ["signedTransaction": signed])
        #expect(posted.status == 200, "\(posted.text)")
        return signed
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
