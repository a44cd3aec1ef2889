import AppStoreModels
import AppStoreSimulator
import Foundation
import StorekeeperTesting
import Testing

/// Issue 11, defect 7, end to end: the simulator's App Store APIs go down (its admin outage
/// switch, over HTTP), the app posts a purchase StoreKit signed, Storekeeper grants it at once
/// and completes it from the Server API once Apple is back, through its job worker.
@Suite(.serialized) struct OfflinePurchaseEndToEndTests {
    @Test("Apple unreachable: the purchase is granted at once and completed after Apple comes back")
    func appleUnreachableOnSQLite() async throws {
        try await Self.run(on: .sqlite)
    }

    @Test(
        "Apple unreachable (PostgreSQL): the purchase is granted at once and completed after Apple comes back",
        .enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func appleUnreachableOnPostgreSQL() async throws {
        try await Self.run(on: .postgres(TestDatabase.postgresURL ?? ""))
    }

    static func run(on database: TestDatabase) async throws {
        let harness = try await EndToEndHarness(database: database)
        do {
            try await journey(harness)
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    static func journey(_ harness: EndToEndHarness) async throws {
        let scenario = try AppStoreJSON.decode(
            EndToEndScenario.self, from: Data(#"{"name": "offline purchase", "customers": [{"id": "alice"}]}"#.utf8))
        try await harness.configure(scenario)
        let customer = "/v1/apps/\(harness.appId)/customers/alice"
        // Notifications are lost: what Storekeeper learns comes from the app and from Apple's API.
        await harness.simulator.setLossPolicy(NotificationLossPolicy(fraction: 1))
        _ = try await harness.simulator.perform(SimulatorAction(.purchase, customer: "alice", productId: "monthly"))
        var autoRenewOff = SimulatorAction(.setAutoRenew, customer: "alice", productId: "monthly")
        autoRenewOff.enabled = false
        _ = try await harness.simulator.perform(autoRenewOff)
        let signed = try #require(try await harness.simulator.signedTransactions(customer: "alice").last)

        try await setOutage(harness, true)
        let posted = try harness.expect(
            200,
            await harness.request(
                "POST", customer + "/transactions", key: harness.publicKey, json: ["signedTransaction": signed]))
        #expect(posted.json["completion"] as? String == "pending")
        #expect(pro(posted)?["isActive"] as? Bool == true)
        #expect(pro(posted)?["willRenew"] as? Bool == true, "the signed transaction alone says nothing of auto-renew")

        // The job runs while Apple is still down: rescheduled, nothing changes.
        let worker = harness.application.jobWorker
        #expect(await worker.runDue() == 1)
        #expect(await worker.runDue() == 0)
        #expect(pro(try await read(harness, customer))?["willRenew"] as? Bool == true)

        // Apple comes back; once the backoff (30 s ± 20 %) has passed, the job completes.
        try await setOutage(harness, false)
        harness.clock.advance(milliseconds: 60_000)
        #expect(await worker.runDue() == 1)
        #expect(await worker.runDue() == 0)
        let completed = try await read(harness, customer)
        #expect(pro(completed)?["isActive"] as? Bool == true)
        #expect(pro(completed)?["willRenew"] as? Bool == false)
        let events = try harness.expect(
            200, await harness.request("GET", customer + "/events", key: harness.secretKey))
        let types = (events.json["events"] as? [[String: Any]] ?? []).compactMap {
            ($0["event"] as? [String: Any])?["type"] as? String
        }
        #expect(types == ["TRIAL_STARTED", "TRIAL_CANCELLED"])

        // Both events reach the app's webhook endpoint.
        for _ in 0..<10 where await harness.application.webhookDeliverer.deliverDue() > 0 {}
        #expect(harness.webhooks.deliveries.compactMap(\.type) == ["TRIAL_STARTED", "TRIAL_CANCELLED"])
    }

    /// The simulator's outage switch, through its admin API as an operator would flip it.
    static func setOutage(_ harness: EndToEndHarness, _ active: Bool) async throws {
        let answer = try await HTTPAnswer.send(
            "PUT", harness.simulatorServer.baseURL.absoluteString + "/simulator/v1/settings/outage",
            json: ["active": active])
        guard answer.status == 204 else { throw EndToEndFailure("outage switch: \(answer.status) \(answer.text)") }
    }

    static func read(_ harness: EndToEndHarness, _ path: String) async throws -> HTTPAnswer {
        try harness.expect(200, await harness.request("GET", path, key: harness.publicKey))
    }

    static func pro(_ answer: HTTPAnswer) -> [String: Any]? {
        (answer.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any]
    }
}
