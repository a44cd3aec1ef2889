import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Nothing missed, against the simulator: a scenario run with 30% of its notifications lost
/// (seeded) and Storekeeper unreachable for a simulated week in the middle ends, once the
/// recovery workers have run, with every customer's entitlements, subscriptions and events
/// equal to the same scenario with nothing lost; and so does a run where no notification is
/// ever delivered (history replay and status polling alone).
@Suite(.serialized) struct RecoveryEndToEndTests {
    /// Lifecycles that recovery must reconstruct: renewals, billing retry, a cancellation and
    /// its expiry, a refund and its reversal, an upgrade.
    static let scenarios = [
        "new-subscription-renewals.json", "billing-retry-recovery.json", "cancellation-expiry.json",
        "refund-and-reversal.json", "upgrade.json",
    ]

    /// The scenario files with no Google Play step. A Play scenario is not run here: Google's
    /// pushes carry no state and Play has no notification history to replay, so with its pushes
    /// lost Storekeeper rebuilds only what the Play workers can see (a refund in the voided list,
    /// a state change once an expiry passed): a cancellation, a pause or an upgrade's new token
    /// pushed and lost before then leaves other events and dates than the lossless run, by
    /// design. PlayRecoveryEndToEndTests checks each Play worker against the Play simulator; and
    /// losing only the App Store's notifications in a scenario that mixes both stores adds
    /// nothing the App Store files here do not already cover, at three more runs of its time.
    static let appStoreFiles = EndToEndScenario.files.filter {
        (try? EndToEndScenario.load($0).usesGooglePlay) != true
    }

    /// Both lossy runs against one lossless run of the scenario (it is deterministic).
    @Test(arguments: appStoreFiles)
    func lossyAndNeverDeliveredRunsEqualTheLosslessOneOnSQLite(_ file: String) async throws {
        try await Self.compare(file, on: .sqlite, losses: [0.3, 1])
    }

    @Test(
        .enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)),
        arguments: ["billing-retry-recovery.json", "refund-and-reversal.json"])
    func lossyRunEqualsTheLosslessOneOnPostgreSQL(_ file: String) async throws {
        // A database of its own: the workers visit every app in the store, and the shared one
        // holds hundreds of earlier tests' apps whose App Stores are gone.
        let (database, drop) = try TestDatabase.ownPostgres()
        defer { drop() }
        try await Self.compare(file, on: database, losses: [0.3])
    }

    /// A subscription cancelled and expired while every notification is lost shows as expired
    /// once the polling delay has passed, and Storekeeper's subscription says why.
    @Test func aLostExpiryShowsWithinThePollingDelay() async throws {
        let scenario = try EndToEndScenario.load("cancellation-expiry.json")
        let harness = try await EndToEndHarness(database: .sqlite)
        do {
            try await harness.configure(scenario)
            let customer = try #require(scenario.customers.first?.id)
            _ = try await harness.simulator.perform(
                try Self.action(["action": "purchase", "customer": customer, "productId": "monthly"]))
            let signed = try await harness.simulator.signedTransactions(customer: customer)
            try harness.expect(
                200,
                await harness.request(
                    "POST", "/v1/apps/\(harness.appId)/customers/\(customer)/transactions", key: harness.publicKey,
                    json: ["signedTransaction": try #require(signed.last)]))
            await harness.simulator.setLossPolicy(NotificationLossPolicy(fraction: 1))
            _ = try await harness.simulator.perform(
                try Self.action([
                    "action": "setAutoRenew", "customer": customer, "productId": "monthly", "enabled": false,
                ]))
            _ = try await harness.simulator.perform(try Self.action(["action": "advanceTime", "days": 40]))
            let polled = await harness.application.statusPollingWorker.runOnce()
            #expect(polled == 1)
            let info = try harness.expect(
                200,
                await harness.request(
                    "GET", "/v1/apps/\(harness.appId)/customers/\(customer)", key: harness.publicKey))
            let subscription = (info.json["subscriptions"] as? [String: Any])?["monthly"] as? [String: Any]
            #expect(subscription?["status"] as? String == "EXPIRED")
            #expect(subscription?["willRenew"] as? Bool == false)
            #expect(
                (info.json["entitlements"] as? [String: Any])?.values.contains {
                    ($0 as? [String: Any])?["isActive"] as? Bool == true
                } == false)
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    static func action(_ json: [String: Any]) throws -> SimulatorAction {
        try AppStoreJSON.decode(SimulatorAction.self, from: JSONSerialization.data(withJSONObject: json))
    }

    // MARK: Runs

    /// What the comparison looks at, per customer: entitlements, subscriptions and event types,
    /// without ids the simulator draws at random.
    struct Outcome: Equatable, CustomStringConvertible {
        var entitlements: [String: String]
        var subscriptions: [String: String]
        var events: [String]

        var description: String { "entitlements \(entitlements), subscriptions \(subscriptions), events \(events)" }
    }

    static func compare(_ file: String, on database: TestDatabase, losses: [Double]) async throws {
        let lossless = try await run(file, on: database, loss: 0)
        for loss in losses {
            let lossy = try await run(file, on: database, loss: loss)
            #expect(lossless.keys.sorted() == lossy.keys.sorted(), "\(file) with \(loss) lost")
            for (customer, expected) in lossless.sorted(by: { $0.key < $1.key }) {
                #expect(lossy[customer] == expected, "\(file) with \(loss) lost: \(customer) differs")
            }
        }
    }

    /// Runs the scenario's steps with `loss` of the notifications dropped (seeded) and
    /// Storekeeper unreachable for a simulated week after the middle step, then lets the
    /// recovery workers run, and reads every customer's outcome.
    static func run(_ file: String, on database: TestDatabase, loss: Double) async throws -> [String: Outcome] {
        let scenario = try EndToEndScenario.load(file)
        let harness = try await EndToEndHarness(database: database)
        do {
            try await harness.configure(scenario)
            let outcome = try await run(scenario, harness: harness, loss: loss)
            await harness.stop()
            return outcome
        } catch {
            await harness.stop()
            throw error
        }
    }

    private static func run(_ scenario: EndToEndScenario, harness: EndToEndHarness, loss: Double) async throws
        -> [String: Outcome]
    {
        let simulator = harness.simulator
        let usual = loss > 0 ? NotificationLossPolicy(fraction: loss, seed: 7) : .none
        await simulator.setLossPolicy(usual)
        let middle = scenario.steps.count / 2
        for (index, checked) in scenario.steps.enumerated() {
            if index == middle {
                // Storekeeper is down for a week: every send (and Apple's retries) fails.
                let url = harness.server.baseURL.absoluteString + harness.notificationPath
                if loss > 0 {
                    try await simulator.setNotificationURL(
                        bundleId: scenario.app.bundleId, v2: "http://127.0.0.1:9/down")
                }
                _ = try await simulator.perform(try action(["action": "advanceTime", "days": 7]))
                try await simulator.setNotificationURL(bundleId: scenario.app.bundleId, v2: url)
            }
            switch checked.step {
            case .simulator(let action, _):
                _ = try await simulator.perform(action)
            case .postTransaction(let customer, let productId):
                let signed = try await simulator.signedTransactions(customer: customer).filter { jws in
                    productId == nil
                        || UnverifiedJWS.payload(jws, as: JWSTransactionDecodedPayload.self)?.productId == productId
                }
                guard let latest = signed.last else { continue }
                try harness.expect(
                    200,
                    await harness.request(
                        "POST", "/v1/apps/\(harness.appId)/customers/\(customer)/transactions",
                        key: harness.publicKey, json: ["signedTransaction": latest]))
            case .restore(let customer):
                _ = try await harness.request(
                    "POST", "/v1/apps/\(harness.appId)/customers/\(customer)/restore", key: harness.publicKey)
            case .replayNotificationHistory:
                await harness.application.historyReplayWorker.runOnce()
            case .dropNotifications(let drop):
                await simulator.setLossPolicy(drop ? NotificationLossPolicy(fraction: 1) : usual)
            case .play, .postPurchaseToken:
                throw EndToEndFailure("\(scenario.name): Google Play steps are not run with lost notifications")
            }
            // The workers run on their schedule while the server is up (every run alike).
            await workers(harness)
        }
        // The workers' turn, after the polling delay (the same wait in every run).
        _ = try await simulator.perform(try action(["action": "advanceTime", "hours": 2]))
        await workers(harness)
        var outcomes: [String: Outcome] = [:]
        for customer in scenario.customers.map(\.id) {
            outcomes[customer] = try await outcome(of: customer, harness: harness)
        }
        return outcomes
    }

    /// One pass of each recovery worker (polling until nothing is due), then the access scheduler,
    /// a few simulated seconds apart from the steps: the simulator signs every payload of an
    /// instant with that instant's `signedDate`, and a poll in the same millisecond as a
    /// notification gets a renewal info with the same key (app, original transaction,
    /// signedDate) but older content, which the store keeps as the first one seen.
    private static func workers(_ harness: EndToEndHarness) async {
        _ = try? await harness.simulator.perform(try action(["action": "advanceTime", "hours": 0.001]))
        await harness.application.historyReplayWorker.runOnce()
        for _ in 0..<20 where await harness.application.statusPollingWorker.runOnce() > 0 {}
        await harness.application.accessScheduler.commitDue()
        _ = try? await harness.simulator.perform(try action(["action": "advanceTime", "hours": 0.001]))
    }

    private static func outcome(of customer: String, harness: EndToEndHarness) async throws -> Outcome {
        let info = try harness.expect(
            200, await harness.request("GET", "/v1/apps/\(harness.appId)/customers/\(customer)", key: harness.publicKey)
        )
        var entitlements: [String: String] = [:]
        for (id, value) in info.json["entitlements"] as? [String: Any] ?? [:] {
            let entitlement = value as? [String: Any] ?? [:]
            entitlements[id] = [
                "\(entitlement["isActive"] ?? "-")", "\(entitlement["productId"] ?? "-")",
                "\(entitlement["expiresDate"] ?? "-")",
            ].joined(separator: " ")
        }
        var subscriptions: [String: String] = [:]
        for (id, value) in info.json["subscriptions"] as? [String: Any] ?? [:] {
            let subscription = value as? [String: Any] ?? [:]
            subscriptions[id] = [
                "\(subscription["status"] ?? "-")", "\(subscription["expiresDate"] ?? "-")",
                "\(subscription["willRenew"] ?? "-")",
            ].joined(separator: " ")
        }
        let page = try await harness.request(
            "GET", "/v1/apps/\(harness.appId)/customers/\(customer)/events?limit=500", key: harness.secretKey)
        let events = (page.json["events"] as? [[String: Any]] ?? []).compactMap {
            ($0["event"] as? [String: Any])?["type"] as? String
        }
        return Outcome(entitlements: entitlements, subscriptions: subscriptions, events: events)
    }
}
