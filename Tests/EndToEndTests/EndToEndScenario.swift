import AppStoreModels
import AppStoreSimulator
import Entitlements
import Foundation
import GooglePlaySimulator

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
///
/// `store` (`app_store`, the default, or `play_store`: the spelling of CustomerInfo's and the
/// webhooks' `store`) says which simulator a step drives; on a customer it is the default of the
/// customer's steps. A `play_store` step is a `PlayScenarioAction` (`action`) on the Play
/// simulator, whose pushes reach Storekeeper's Play notification route, or the app posting the
/// customer's purchase token (`app`: `postTransaction`). `googlePlay` holds the app's Play
/// settings (`acknowledgePurchases`, default true).
struct EndToEndScenario: Sendable, Decodable {
    /// What Storekeeper must say about one customer.
    struct CustomerExpectation: Sendable, Decodable {
        var customer: String?
        /// Exactly the active entitlement ids (sorted or not).
        var active: [String]?
        /// The lifecycle event types, in the order the events API lists them.
        var events: [String]?
        /// Exactly CustomerInfo's `entitlements` (every entitlement, every field); an instant may
        /// be written as `2025-12-01T00:00:00Z` for its milliseconds.
        var entitlements: [String: JSONValue]?
        /// Exactly CustomerInfo's `subscriptions`, written as `entitlements` is.
        var subscriptions: [String: JSONValue]?
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
        /// A Play simulator operation; its pushes are the step's notifications.
        case play(PlayScenarioAction, expect: SimulatorExpectation?)
        /// The app posts the customer's purchase token of `productId` (else of its only product).
        case postPurchaseToken(customer: String, productId: String?)

        private enum CodingKeys: String, CodingKey {
            case action, expect, app, `operator`, network, customer, productId, store
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let store = try Self.store(of: container, decoder: decoder)
            if store == .playStore {
                self = try Self.playStep(container, decoder: decoder)
            } else if container.contains(.action) {
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

        /// The step's own `store`, else its customer's, else the App Store.
        private static func store(of container: KeyedDecodingContainer<CodingKeys>, decoder: any Decoder) throws
            -> Marketplace
        {
            let step = "step \((decoder.codingPath.last?.intValue ?? -1) + 1)"
            if let text = try container.decodeIfPresent(String.self, forKey: .store) {
                return try StoreField.parse(text, at: step)
            }
            let customer = try container.decodeIfPresent(String.self, forKey: .customer)
            let defaults = decoder.userInfo[StoreField.customerStoresKey] as? [String: Marketplace] ?? [:]
            return customer.flatMap { defaults[$0] } ?? .appStore
        }

        private static func playStep(_ container: KeyedDecodingContainer<CodingKeys>, decoder: any Decoder) throws
            -> Step
        {
            let step = "step \((decoder.codingPath.last?.intValue ?? -1) + 1)"
            if container.contains(.action) {
                let action: PlayScenarioAction
                do {
                    action = try PlayScenarioAction(from: decoder, at: step)
                } catch let error as PlayScenarioError {
                    throw ScenarioFileError(error.description)
                }
                return .play(action, expect: try container.decodeIfPresent(SimulatorExpectation.self, forKey: .expect))
            }
            guard let call = try container.decodeIfPresent(String.self, forKey: .app) else {
                throw ScenarioFileError("\(step): a play_store step is an action or the app's postTransaction")
            }
            guard call == "postTransaction" else {
                throw ScenarioFileError("\(step): on play_store the app can only postTransaction (its purchase token)")
            }
            return .postPurchaseToken(
                customer: try container.decode(String.self, forKey: .customer),
                productId: try container.decodeIfPresent(String.self, forKey: .productId))
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
    /// The app's Play side, configured when a step drives the Play simulator or this is present.
    var googlePlay: GooglePlaySettings?

    /// The app's Play settings in Storekeeper.
    struct GooglePlaySettings: Sendable, Decodable {
        /// Whether Storekeeper acknowledges purchases (Google refunds unacknowledged ones after
        /// three days).
        var acknowledgePurchases: Bool?
    }

    /// Whether the Play simulator takes part: the app gets its Play side.
    var usesGooglePlay: Bool {
        googlePlay != nil
            || steps.contains {
                switch $0.step {
                case .play, .postPurchaseToken: true
                default: false
                }
            }
    }

    private enum CodingKeys: String, CodingKey {
        case name, app, entitlements, customers, steps, expect, googlePlay
    }

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
        googlePlay = try container.decodeIfPresent(GooglePlaySettings.self, forKey: .googlePlay)
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Scenarios")

    static func sharedCatalog() throws -> Catalog {
        try AppStoreJSON.decode(Catalog.self, from: Data(contentsOf: directory.appendingPathComponent("catalog.json")))
    }

    static func load(_ file: String) throws -> EndToEndScenario {
        try decode(Data(contentsOf: directory.appendingPathComponent(file)), file: file)
    }

    /// Decodes a scenario file; any refusal names `file` (and the step or customer at fault).
    static func decode(_ data: Data, file: String) throws -> EndToEndScenario {
        do {
            // First the customers' stores: every step of a customer defaults to its store.
            let stores = try JSONDecoder().decode(StoreField.CustomerStores.self, from: data)
            let decoder = JSONDecoder()
            decoder.userInfo[StoreField.customerStoresKey] = try stores.defaults()
            return try decoder.decode(EndToEndScenario.self, from: data)
        } catch let error as ScenarioFileError {
            throw ScenarioFileError("\(file): \(error.description)")
        } catch let error as DecodingError {
            throw ScenarioFileError("\(file): \(AppStoreJSON.describe(error, type: "EndToEndScenario"))")
        }
    }

    /// Every scenario file (all but the shared catalog), sorted.
    static var files: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") && $0 != "catalog.json" }.sorted()
    }
}
