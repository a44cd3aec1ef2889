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
/// here (`ScenarioStores`).
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
    }

    public struct ExpectedSubscription: Sendable, Codable, Hashable {
        public var customer: String
        public var productId: String
        /// `active`, `expired`, `billingRetry`, `billingGracePeriod`, `revoked`.
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
        var defaults: [String: String] = [:]
        for customer in customers ?? [] {
            guard let store = customer.store else { continue }
            try Self.known(store, at: "customer \(customer.id ?? "?")")
            defaults[customer.id ?? ""] = store
        }
        for (index, step) in (steps ?? []).enumerated() {
            let place = "step \(index + 1)"
            if let store = step.store { try Self.known(store, at: place) }
            if (step.store ?? step.customer.flatMap { defaults[$0] }) == Self.playStore {
                throw SimulatorError(
                    .invalidAction,
                    "scenario: \(place) is a play_store step: this runner drives the App Store simulator only "
                        + "(Google Play steps run in the end-to-end scenarios)")
            }
        }
    }

    private static func known(_ store: String, at place: String) throws(SimulatorError) {
        guard store == appStore || store == playStore else {
            throw SimulatorError(
                .invalidAction, "scenario: \(place): store \"\(store.prefix(64))\" is not app_store or play_store")
        }
    }
}
