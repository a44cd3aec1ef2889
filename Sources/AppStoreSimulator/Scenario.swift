import AppStoreModels
import Foundation

/// A customer journey as a JSON file: the app and its catalog, the customers, the clock, and
/// steps — each a `SimulatorAction` with the outcome it must have.
///
/// ```json
/// {"name": "trial, renew, cancel",
///  "clock": {"mode": "manual"},
///  "app": {"bundleId": "com.example", "appAppleId": 1, "products": [ … ]},
///  "customers": [{"id": "alice"}],
///  "steps": [
///    {"action": "purchase", "customer": "alice", "productId": "monthly",
///     "expect": {"notifications": [{"type": "SUBSCRIBED", "subtype": "INITIAL_BUY"}],
///                "subscriptions": [{"customer": "alice", "productId": "monthly", "status": "active"}]}},
///    {"action": "renew", "customer": "alice", "productId": "monthly",
///     "expect": {"notifications": [{"type": "DID_RENEW"}]}}]}
/// ```
/// An expected notification without `subtype` expects none; `notifications` lists everything
/// the step produced, in order. `"error": "simulator.offerNotAvailable"` expects a refusal.
/// `store` on a customer or step is `app_store` (the default); a `play_store` step is refused
/// by `load` (`ScenarioStores`) and kept apart by `loadWithPlaySteps`, for a runner that drives
/// the Play simulator too (`storekeeper simulate run`).
/// - Note: Immutable value; `Sendable`.
public struct Scenario: Sendable, Codable {
    public struct Clock: Sendable, Codable {
        /// `manual` (time travels at each step; default) or `accelerated` (wall clock, periods
        /// compressed to `monthSeconds`).
        public var mode: String?
        public var monthSeconds: Double?
        /// The manual clock's start; default: the time the run begins.
        public var start: Timestamp?
    }

    public struct ExpectedNotification: Sendable, Codable, Hashable {
        public var type: String
        public var subtype: String?
        public var customer: String?

        public init(type: String, subtype: String?, customer: String?) {
            (self.type, self.subtype, self.customer) = (type, subtype, customer)
        }
    }

    public struct ExpectedSubscription: Sendable, Codable, Hashable {
        public var customer: String
        public var productId: String
        /// `active`, `expired`, `billingRetry`, `billingGracePeriod`, `revoked` (a Play step:
        /// Google's `subscriptionState`, `SUBSCRIPTION_STATE_ACTIVE`, …).
        public var status: String
    }

    public struct Expectation: Sendable, Codable {
        public var notifications: [ExpectedNotification]?
        public var subscriptions: [ExpectedSubscription]?
        public var error: String?
    }

    public struct Step: Sendable, Decodable {
        public var action: SimulatorAction
        public var expect: Expectation?
        public var note: String?

        private enum CodingKeys: String, CodingKey { case expect, note }

        public init(from decoder: any Decoder) throws {
            action = try SimulatorAction(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            expect = try container.decodeIfPresent(Expectation.self, forKey: .expect)
            note = try container.decodeIfPresent(String.self, forKey: .note)
        }

        public init(action: SimulatorAction, expect: Expectation? = nil, note: String? = nil) {
            self.action = action
            self.expect = expect
            self.note = note
        }
    }

    public var name: String
    public var environment: AppStoreEnvironment?
    public var clock: Clock?
    public var app: SimulatedApp
    public var customers: [SimulatedCustomer]
    public var steps: [Step]

    private enum CodingKeys: String, CodingKey { case name, environment, clock, app, customers, steps }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeIfPresent(String.self, forKey: .name) ?? "scenario"
        environment = try container.decodeIfPresent(AppStoreEnvironment.self, forKey: .environment)
        clock = try container.decodeIfPresent(Clock.self, forKey: .clock)
        app = try container.decode(SimulatedApp.self, forKey: .app)
        customers = try container.decodeIfPresent([SimulatedCustomer].self, forKey: .customers) ?? []
        steps = try container.decodeIfPresent([Step].self, forKey: .steps) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encodeIfPresent(environment, forKey: .environment)
        try container.encodeIfPresent(clock, forKey: .clock)
        try container.encode(app, forKey: .app)
        try container.encode(customers, forKey: .customers)
    }

    /// Where a step of a file with Google Play steps goes: the App Store scenario's step
    /// `index`, or a `play_store` step (its JSON, for the Play runner to read).
    public enum StepPlace: Sendable {
        case appStore(index: Int)
        case playStore(Data)
    }

    /// Reads a scenario file whose steps may be `play_store` ones: the scenario of its App Store
    /// steps, and every step's place in file order.
    public static func loadWithPlaySteps(_ data: Data) throws(SimulatorError) -> (Scenario, [StepPlace]) {
        let stores: ScenarioStores
        do {
            stores = try JSONDecoder().decode(ScenarioStores.self, from: data)
        } catch {
            throw SimulatorError(.invalidAction, "scenario: not a JSON object with customers and steps")
        }
        let isPlay = try stores.playSteps()
        guard var object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw SimulatorError(.invalidAction, "scenario: not a JSON object")
        }
        var kept: [Any] = []
        var places: [StepPlace] = []
        for (index, step) in (object["steps"] as? [Any] ?? []).enumerated() {
            if isPlay[index] {
                guard let json = try? JSONSerialization.data(withJSONObject: step) else {
                    throw SimulatorError(.invalidAction, "scenario: step \(index + 1) is not a JSON object")
                }
                places.append(.playStore(json))
            } else {
                places.append(.appStore(index: kept.count))
                kept.append(step)
            }
        }
        object["steps"] = kept
        do {
            let filtered = try JSONSerialization.data(withJSONObject: object)
            return (try AppStoreJSON.decode(Scenario.self, from: filtered), places)
        } catch let error as SimulatorError {
            throw error
        } catch {
            throw SimulatorError(.invalidAction, "scenario: \(error)")
        }
    }

    public static func load(_ data: Data) throws(SimulatorError) -> Scenario {
        // The stores first: a Google Play step must be refused, not run as an App Store action.
        if let stores = try? JSONDecoder().decode(ScenarioStores.self, from: data) { try stores.check() }
        do {
            return try AppStoreJSON.decode(Scenario.self, from: data)
        } catch {
            throw SimulatorError(.invalidAction, "scenario: \(error.description)")
        }
    }
}

/// The `store` fields of a scenario file shared with the end-to-end tests: `app_store` (the
/// default) or `play_store`, on a customer (the default of its steps) or on a step. This runner
/// drives the App Store simulator only, so it refuses a file with a Google Play step.
struct ScenarioStores: Decodable {
    struct Entry: Decodable {
        var id: String?
        var customer: String?
        var store: String?
    }
    var customers: [Entry]?
    var steps: [Entry]?

    static let appStore = "app_store"
    static let playStore = "play_store"

    func check() throws(SimulatorError) {
        if let index = try playSteps().firstIndex(of: true) {
            throw SimulatorError(
                .invalidAction,
                "scenario: step \(index + 1) is a play_store step: this runner drives the App Store simulator only "
                    + "(`storekeeper simulate run` drives Google Play too)")
        }
    }

    /// Whether each step is a `play_store` one (its own `store`, else its customer's); an
    /// unknown store is refused.
    func playSteps() throws(SimulatorError) -> [Bool] {
        var defaults: [String: String] = [:]
        for customer in customers ?? [] {
            guard let store = customer.store else { continue }
            try Self.known(store, at: "customer \(customer.id ?? "?")")
            defaults[customer.id ?? ""] = store
        }
        var result: [Bool] = []
        for (index, step) in (steps ?? []).enumerated() {
            if let store = step.store { try Self.known(store, at: "step \(index + 1)") }
            result.append((step.store ?? step.customer.flatMap { defaults[$0] }) == Self.playStore)
        }
        return result
    }

    private static func known(_ store: String, at place: String) throws(SimulatorError) {
        guard store == appStore || store == playStore else {
            throw SimulatorError(
                .invalidAction, "scenario: \(place): store \"\(store.prefix(64))\" is not app_store or play_store")
        }
    }
}
