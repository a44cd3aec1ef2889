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
        do {
            return try AppStoreJSON.decode(Scenario.self, from: data)
        } catch {
            throw SimulatorError(.invalidAction, "scenario: \(error.description)")
        }
    }
}
