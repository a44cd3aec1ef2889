import AppStoreModels
import AppStoreSimulator
import Foundation

/// A customer journey run through the whole product: simulator actions, the app posting what
/// StoreKit gave it, and what Storekeeper must end up with.
///
/// ```json
/// {"name": "trial converts",
///  "customers": [{"id": "alice"}],
///  "steps": [
///    {"action": "purchase", "customer": "alice", "productId": "monthly",
///     "expect": {"notifications": [{"type": "SUBSCRIBED", "subtype": "INITIAL_BUY"}]}},
///    {"app": "postTransaction", "customer": "alice", "check": [{"customer": "alice", "active": ["pro"]}]},
///    {"action": "renew", "customer": "alice", "productId": "monthly"}],
///  "expect": {"alice": {"active": ["pro"], "events": ["TRIAL_STARTED", "TRIAL_CONVERTED"]}}}
/// ```
///
/// The app and the entitlement mapping come from `Scenarios/catalog.json` unless the file has
/// its own `app` and `entitlements`. A step is one of: a simulator action (`action`, with the
/// simulator's own `expect`), an app call (`app`: `postTransaction` or `restore`), an operator
/// call (`operator`: `replayNotificationHistory`), or a network change (`network`:
/// `dropNotifications` or `deliverNotifications`). Any step may `check` customers afterwards.
struct EndToEndScenario: Sendable, Decodable {
    /// What Storekeeper must say about one customer.
    struct CustomerExpectation: Sendable, Decodable {
        var customer: String?
        /// Exactly the active entitlement ids (sorted or not).
        var active: [String]?
        /// The lifecycle event types, in the order the events API lists them.
        var events: [String]?
        /// Why this expectation is known not to hold yet: the check runs as a known issue, and
        /// the run fails once it holds, so the note is removed with the fix.
        var knownIssue: String?
    }

    enum Step: Sendable, Decodable {
        case simulator(SimulatorAction, expect: SimulatorExpectation?)
        case postTransaction(customer: String, productId: String?)
        case restore(customer: String)
        case replayNotificationHistory
        case dropNotifications(Bool)

        private enum CodingKeys: String, CodingKey {
            case action, expect, app, `operator`, network, customer, productId
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if container.contains(.action) {
                self = .simulator(
                    try SimulatorAction(from: decoder),
                    expect: try container.decodeIfPresent(SimulatorExpectation.self, forKey: .expect))
            } else if let call = try container.decodeIfPresent(String.self, forKey: .app) {
                let customer = try container.decode(String.self, forKey: .customer)
                switch call {
                case "postTransaction":
                    self = .postTransaction(
                        customer: customer, productId: try container.decodeIfPresent(String.self, forKey: .productId))
                case "restore": self = .restore(customer: customer)
                default:
                    throw DecodingError.dataCorruptedError(
                        forKey: .app, in: container, debugDescription: "app is postTransaction or restore")
                }
            } else if let call = try container.decodeIfPresent(String.self, forKey: .operator) {
                guard call == "replayNotificationHistory" else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .operator, in: container, debugDescription: "operator is replayNotificationHistory")
                }
                self = .replayNotificationHistory
            } else if let change = try container.decodeIfPresent(String.self, forKey: .network) {
                switch change {
                case "dropNotifications": self = .dropNotifications(true)
                case "deliverNotifications": self = .dropNotifications(false)
                default:
                    throw DecodingError.dataCorruptedError(
                        forKey: .network, in: container,
                        debugDescription: "network is dropNotifications or deliverNotifications")
                }
            } else {
                throw DecodingError.dataCorruptedError(
                    forKey: .action, in: container, debugDescription: "a step needs action, app, operator or network")
            }
        }
    }

    /// A step and the checks made after it.
    struct CheckedStep: Sendable, Decodable {
        var step: Step
        var check: [CustomerExpectation]
        var note: String?

        private enum CodingKeys: String, CodingKey { case check, note }

        init(from decoder: any Decoder) throws {
            step = try Step(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            check = try container.decodeIfPresent([CustomerExpectation].self, forKey: .check) ?? []
            note = try container.decodeIfPresent(String.self, forKey: .note)
        }
    }

    /// The simulator's side of a step: the notifications it produced, in order (`subtype`
    /// omitted means none), and the customer subscription statuses afterwards.
    struct SimulatorExpectation: Sendable, Decodable {
        struct Notification: Sendable, Decodable, Equatable {
            var type: String
            var subtype: String?
            var customer: String?
        }

        struct Subscription: Sendable, Decodable {
            var customer: String
            var productId: String
            var status: String
        }

        var notifications: [Notification]?
        var subscriptions: [Subscription]?
        /// Why the simulator is known not to produce these `notifications` yet: that check runs as
        /// a known issue, and the run fails once it holds, so the note is removed with the fix.
        var knownIssue: String?
    }

    var name: String
    var app: SimulatedApp
    /// Product id → the entitlements it unlocks in Storekeeper's catalog.
    var entitlements: [String: [String]]
    var customers: [SimulatedCustomer]
    var steps: [CheckedStep]
    /// Final state, by customer.
    var expect: [String: CustomerExpectation]

    private enum CodingKeys: String, CodingKey { case name, app, entitlements, customers, steps, expect }

    /// The shared app and mapping of `Scenarios/catalog.json`.
    struct Catalog: Sendable, Decodable {
        var app: SimulatedApp
        var entitlements: [String: [String]]
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        let shared = try Self.sharedCatalog()
        app = try container.decodeIfPresent(SimulatedApp.self, forKey: .app) ?? shared.app
        entitlements =
            try container.decodeIfPresent([String: [String]].self, forKey: .entitlements) ?? shared.entitlements
        customers = try container.decodeIfPresent([SimulatedCustomer].self, forKey: .customers) ?? []
        steps = try container.decodeIfPresent([CheckedStep].self, forKey: .steps) ?? []
        expect = try container.decodeIfPresent([String: CustomerExpectation].self, forKey: .expect) ?? [:]
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Scenarios")

    static func sharedCatalog() throws -> Catalog {
        try AppStoreJSON.decode(Catalog.self, from: Data(contentsOf: directory.appendingPathComponent("catalog.json")))
    }

    static func load(_ file: String) throws -> EndToEndScenario {
        try AppStoreJSON.decode(EndToEndScenario.self, from: Data(contentsOf: directory.appendingPathComponent(file)))
    }

    /// Every scenario file (all but the shared catalog), sorted.
    static var files: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") && $0 != "catalog.json" }.sorted()
    }
}
