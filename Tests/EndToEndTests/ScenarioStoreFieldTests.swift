import Foundation
import Testing

/// The scenario files' `store` field, read without running anything: which simulator each step
/// drives, the customer's store as its steps' default, and unknown values refused with the file
/// and the step (or customer) named.
@Suite struct ScenarioStoreFieldTests {
    static func decode(customers: String, steps: String) throws -> EndToEndScenario {
        try EndToEndScenario.decode(
            Data(#"{"name": "stores", "customers": [\#(customers)], "steps": [\#(steps)]}"#.utf8), file: "stores.json")
    }

    static func refusal(customers: String = #"{"id": "a"}"#, steps: String) -> String? {
        do {
            _ = try decode(customers: customers, steps: steps)
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// What each step became: the store it drives and its action.
    static func kinds(_ scenario: EndToEndScenario) -> [String] {
        scenario.steps.map {
            switch $0.step {
            case .simulator(let action, _): "app_store " + action.action.rawValue
            case .play(let action, _): "play_store " + action.action.rawValue
            case .postTransaction(let customer, _): "app_store post " + customer
            case .postPurchaseToken(let customer, _): "play_store post " + customer
            case .restore: "restore"
            case .replayNotificationHistory: "replay"
            case .dropNotifications: "network"
            }
        }
    }

    @Test func stepsDriveTheirOwnStoreOrTheirCustomers() throws {
        let scenario = try Self.decode(
            customers: #"{"id": "ann"}, {"id": "pat", "store": "play_store"}"#,
            steps: """
                {"action": "purchase", "customer": "ann", "productId": "monthly"},
                {"app": "postTransaction", "customer": "ann"},
                {"action": "grace", "customer": "pat", "productId": "monthly"},
                {"app": "postTransaction", "customer": "pat"},
                {"store": "play_store", "action": "purchase", "customer": "ann", "productId": "monthly"},
                {"store": "app_store", "action": "purchase", "customer": "pat", "productId": "monthly"},
                {"action": "advanceTime", "days": 3},
                {"store": "play_store", "action": "changePlan", "customer": "pat", "productId": "monthly",
                 "toProductId": "yearly"}
                """)
        #expect(
            Self.kinds(scenario) == [
                "app_store purchase", "app_store post ann", "play_store grace", "play_store post pat",
                "play_store purchase", "app_store purchase", "app_store advanceTime", "play_store changePlan",
            ])
        #expect(scenario.usesGooglePlay)
        let appStoreOnly = try Self.decode(
            customers: #"{"id": "ann"}"#, steps: #"{"action": "advanceTime", "days": 1}"#)
        #expect(!appStoreOnly.usesGooglePlay)
    }

    @Test func unknownValuesAreRefusedNamingTheFileAndStep() {
        #expect(
            Self.refusal(steps: #"{"action": "advanceTime", "days": 1}, {"store": "googlePlay", "action": "purchase"}"#)
                == #"stores.json: step 2: store "googlePlay" is not app_store or play_store"#)
        #expect(
            Self.refusal(customers: #"{"id": "a", "store": "amazon"}"#, steps: "")
                == #"stores.json: customer a: store "amazon" is not app_store or play_store"#)
        #expect(
            Self.refusal(steps: #"{"store": "play_store", "action": "billingIssue", "customer": "a"}"#)
                == "stores.json: step 1: play_store action \"billingIssue\" is not one of purchase, renew, grace, "
                + "hold, recover, pause, resume, cancel, restart, revoke, expire, void, changePlan, advanceTime")
        #expect(
            Self.refusal(steps: #"{"store": "play_store", "app": "restore", "customer": "a"}"#)
                == "stores.json: step 1: on play_store the app can only postTransaction (its purchase token)")
        #expect(
            Self.refusal(steps: #"{"store": "play_store", "action": "void", "customer": "a", "reason": "bored"}"#)
                == "stores.json: step 1: reason \"bored\" is not one of other, remorse, notReceived, defective, "
                + "accidentalPurchase, fraud, friendlyFraud, chargeback, unacknowledgedPurchase")
        #expect(
            Self.refusal(steps: #"{"store": "play_store", "action": "renew"}"#)
                == "stores.json: step 1: play_store action renew needs a customer")
    }
}
