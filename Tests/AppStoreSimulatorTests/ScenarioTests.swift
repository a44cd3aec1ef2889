import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import Testing

/// Scenario files run to their expected outcomes, and everything the simulator signs on the way
/// verifies with our SignedDataVerifier against the simulator's root.
@Suite struct ScenarioTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Scenarios")

    @Test func fullLifecycleScenarioPassesAndEverythingVerifies() async throws {
        let scenario = try Scenario.load(
            try Data(contentsOf: Self.directory.appendingPathComponent("full-lifecycle.json")))
        let authority = try StorekeeperTestingAuthority.shared()
        let transport = RecordingTransport()
        let simulator = try await ScenarioRunner.makeSimulator(
            for: scenario, authority: authority, start: SimulatorFixture.start, transport: transport,
            notificationURL: "http://127.0.0.1:9/")
        let report = await ScenarioRunner(simulator: simulator).run(scenario)
        for step in report.steps where !step.passed {
            Issue.record("step \(step.index) \(step.action): \(step.problems.joined(separator: "; "))")
        }
        #expect(report.steps.count == scenario.steps.count)

        let verifier = try SignedDataVerifier(
            rootCertificates: [authority.root], bundleId: scenario.app.bundleId, appAppleId: scenario.app.appAppleId,
            environment: .sandbox)
        let notifications = await simulator.producedNotifications()
        #expect(notifications.count == transport.count)
        var types: Set<String> = []
        for notification in notifications {
            let verified = try verifier.verifyAndDecodeNotificationContents(notification.signedPayload)
            let payload = verified.notification.payload
            types.insert(notification.notificationType)
            #expect(payload.version == "2.0")
            #expect(payload.notificationUUID == notification.notificationUUID)
            if let transaction = verified.transaction?.payload {
                #expect(transaction.environment == .sandbox)
                #expect(transaction.signedDate != nil)
            }
            // Apple omits what does not apply; nothing is ever `null`.
            let json = try #require(Data(base64URL: notification.signedPayload.split(separator: ".")[1]))
            #expect(!String(decoding: json, as: UTF8.self).contains("null"))
        }
        #expect(
            types.isSuperset(of: [
                "SUBSCRIBED", "DID_RENEW", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "PRICE_INCREASE",
                "RENEWAL_EXTENDED", "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "REVOKE", "CONSUMPTION_REQUEST",
                "REFUND_DECLINED", "REFUND", "REFUND_REVERSED", "EXPIRED", "ONE_TIME_CHARGE", "RENEWAL_EXTENSION",
            ]))
        for customer in scenario.customers {
            for signed in try await simulator.signedTransactions(customer: customer.id) {
                _ = try verifier.verifyAndDecodeTransaction(signed)
            }
            for signed in try await simulator.signedRenewalInfos(customer: customer.id) {
                _ = try verifier.verifyAndDecodeRenewalInfo(signed)
            }
        }
    }

    @Test func reportsUnmetExpectations() async throws {
        let json = """
            {"name": "wrong", "app": {"bundleId": "b", "appAppleId": 1, "products": [
              {"productId": "p", "kind": "nonConsumable", "prices": [{"storefront": "USA", "currency": "USD", "price": 990}]}]},
             "customers": [{"id": "a"}],
             "steps": [{"action": "purchase", "customer": "a", "productId": "p",
                        "expect": {"notifications": [{"type": "SUBSCRIBED", "subtype": "INITIAL_BUY"}]}},
                       {"action": "purchase", "customer": "a", "productId": "missing",
                        "expect": {"error": "simulator.unknownProduct"}}]}
            """
        let scenario = try Scenario.load(Data(json.utf8))
        let simulator = try await ScenarioRunner.makeSimulator(
            for: scenario, authority: try StorekeeperTestingAuthority.shared(), start: SimulatorFixture.start,
            transport: RecordingTransport())
        let report = await ScenarioRunner(simulator: simulator).run(scenario)
        #expect(report.steps.map(\.passed) == [false, true])
        #expect(report.steps[0].problems.first?.contains("got ONE_TIME_CHARGE") == true)
    }

    /// A `store` field names the simulator a step drives: `app_store` steps run here, a
    /// `play_store` step (its own or its customer's store) is refused rather than run as an App
    /// Store action, and an unknown store is refused naming the step or customer.
    @Test func storeFieldRunsAppStoreStepsAndRefusesOthers() throws {
        func load(customer: String, step: String) -> String? {
            let json = """
                {"name": "stores", "app": {"bundleId": "b", "appAppleId": 1, "products": []},
                 "customers": [{"id": "a"\(customer)}, {"id": "b"}],
                 "steps": [{"action": "advanceTime", "days": 1},
                           {"action": "purchase", "customer": "a", "productId": "p"\(step)}]}
                """
            do {
                let scenario = try Scenario.load(Data(json.utf8))
                return scenario.steps.count == 2 ? nil : "steps lost"
            } catch {
                return error.message
            }
        }
        #expect(load(customer: "", step: "") == nil)
        #expect(load(customer: #", "store": "app_store""#, step: #", "store": "app_store""#) == nil)
        let play =
            "scenario: step 2 is a play_store step: this runner drives the App Store simulator only "
            + "(`storekeeper simulate run` drives Google Play too)"
        #expect(load(customer: "", step: #", "store": "play_store""#) == play)
        #expect(load(customer: #", "store": "play_store""#, step: "") == play)
        #expect(
            load(customer: "", step: #", "store": "amazon""#)
                == #"scenario: step 2: store "amazon" is not app_store or play_store"#)
        #expect(
            load(customer: #", "store": "googlePlay""#, step: "")
                == #"scenario: customer a: store "googlePlay" is not app_store or play_store"#)
    }

    /// A file with Google Play steps: the App Store scenario keeps its own steps, and every
    /// step's place says which runner takes it, in file order.
    @Test func playStepsAreKeptApartInFileOrder() throws {
        let json = """
            {"name": "both", "app": {"bundleId": "b", "appAppleId": 1, "products": []},
             "customers": [{"id": "a"}, {"id": "p", "store": "play_store"}],
             "steps": [{"action": "advanceTime", "days": 1},
                       {"action": "purchase", "customer": "p", "productId": "monthly"},
                       {"action": "advanceTime", "days": 2, "store": "play_store"},
                       {"action": "advanceTime", "days": 3}]}
            """
        let (scenario, places) = try Scenario.loadWithPlaySteps(Data(json.utf8))
        #expect(scenario.steps.map { $0.action.days } == [1, 3])
        let shape = places.map { place -> String in
            switch place {
            case .appStore(let index): return "appStore \(index)"
            case .playStore(let step):
                let object = (try? JSONSerialization.jsonObject(with: step)) as? [String: Any]
                return "playStore \(object?["action"] as? String ?? "?") \(object?["days"] as? Int ?? 0)"
            }
        }
        #expect(shape == ["appStore 0", "playStore purchase 0", "playStore advanceTime 2", "appStore 1"])
        #expect(throws: SimulatorError.self) {
            try Scenario.loadWithPlaySteps(Data(json.replacingOccurrences(of: "play_store", with: "amazon").utf8))
        }
    }

    @Test func subscriptionLifecycleDatesAndRenewalInfo() async throws {
        let fixture = try await SimulatorFixture()
        let verifier = try fixture.verifier()
        try await fixture.act(.purchase, "alice", "monthly")
        try await fixture.act(.billingIssue, "alice")
        let failed = try await fixture.act(.renew, "alice", "monthly")
        #expect(failed.types == ["DID_FAIL_TO_RENEW/GRACE_PERIOD"])
        let weekLater = TimeScale.calendar.adding(.week, to: SimulatorFixture.start)
        #expect(fixture.clock.now == weekLater)
        let renewal = try verifier.verifyAndDecodeRenewalInfo(
            try #require(try await fixture.simulator.signedRenewalInfos(customer: "alice").first)
        ).payload
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.expirationIntent == .billingError)
        #expect(renewal.gracePeriodExpiresDate == weekLater.adding(milliseconds: 16 * 86_400_000))
        let recovered = try await fixture.act(.billingRecovery, "alice")
        #expect(recovered.types == ["DID_RENEW/BILLING_RECOVERY"])
        let transactions = try await fixture.simulator.signedTransactions(customer: "alice")
        let latest = try verifier.verifyAndDecodeTransaction(try #require(transactions.last)).payload
        // Recovered within the grace period: the period starts at the original renewal date.
        #expect(latest.purchaseDate == weekLater)
        #expect(latest.expiresDate == TimeScale.calendar.adding(.month, to: weekLater))
        #expect(latest.transactionReason == .renewal)
        #expect(latest.offerType == nil)
    }
}
