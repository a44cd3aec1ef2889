import Foundation
import GooglePlayModels

/// One operation of the Play simulator as a `play_store` scenario step writes it:
/// `{"store": "play_store", "action": "grace", "customer": "gina", "productId": "monthly"}`.
///
/// The purchase acted on is the customer's latest token of `productId` (the only one when
/// absent). What happens at a scheduled instant first travels the shared clock there: `renew`,
/// `grace` and `pause` to the period's end, `hold` to the grace period's end (or the period's),
/// `expire` to the period's end (or the hold's). Everything else happens now; `advanceTime`
/// moves the shared clock, and after every step the Play simulator applies what time does
/// (renewals, grace → hold → expiry, automatic resume, Google's refund of purchases not
/// acknowledged within three days).
/// - Note: Immutable value; `Sendable`.
public struct PlayScenarioAction: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// A subscription (an auto-renewable product in the catalog) or a one-time product.
        case purchase
        case renew
        /// The renewal is declined: the grace period starts.
        case grace
        /// Payment still failing: account hold.
        case hold
        /// The user fixed the payment: a new period from now.
        case recover
        /// Paused at the period's end for `days` (30 unless given).
        case pause
        /// The pause ends early.
        case resume
        case cancel
        /// Renewal turned back on before the period ended.
        case restart
        /// The developer revoked the subscription (a full refund).
        case revoke
        case expire
        /// A refund or chargeback: a voided purchase (`quantity` units of a product: partial).
        case void
        /// An upgrade or downgrade to `toProductId`: a new token linked to the old one.
        case changePlan
        /// Moves the shared clock by `days` and `hours`.
        case advanceTime
    }

    public var action: Kind
    public var customer: String?
    public var productId: String?
    public var toProductId: String?
    /// purchase: the billing period (30 days unless given); pause: its length; advanceTime.
    public var days: Int?
    public var hours: Double?
    /// A one-time purchase's quantity; a partial refund's units.
    public var quantity: Int32?
    /// void: Google's voided reason, by name (`remorse` unless given).
    public var reason: VoidedReason
    /// void: who voided it, by name (`user` unless given).
    public var source: VoidedSource

    private enum CodingKeys: String, CodingKey {
        case action, customer, productId, toProductId, days, hours, quantity, reason, source
    }

    public init(
        _ action: Kind, customer: String? = nil, productId: String? = nil, toProductId: String? = nil,
        days: Int? = nil, hours: Double? = nil, quantity: Int32? = nil, reason: VoidedReason = .remorse,
        source: VoidedSource = .user
    ) {
        self.action = action
        self.customer = customer
        self.productId = productId
        self.toProductId = toProductId
        self.days = days
        self.hours = hours
        self.quantity = quantity
        self.reason = reason
        self.source = source
    }

    /// Decodes the step at `step` (its place in the file, for errors).
    public init(from decoder: any Decoder, at step: String) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .action)
        guard let action = Kind(rawValue: name) else {
            throw PlayScenarioError(
                "\(step): play_store action \"\(name.prefix(64))\" is not one of "
                    + Kind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self.action = action
        customer = try container.decodeIfPresent(String.self, forKey: .customer)
        productId = try container.decodeIfPresent(String.self, forKey: .productId)
        toProductId = try container.decodeIfPresent(String.self, forKey: .toProductId)
        days = try container.decodeIfPresent(Int.self, forKey: .days)
        hours = try container.decodeIfPresent(Double.self, forKey: .hours)
        quantity = try container.decodeIfPresent(Int32.self, forKey: .quantity)
        reason = try Self.named(container, .reason, default: VoidedReason.remorse, step: step)
        source = try Self.named(container, .source, default: VoidedSource.user, step: step)
        if action != .advanceTime, customer == nil {
            throw PlayScenarioError("\(step): play_store action \(name) needs a customer")
        }
        if action == .changePlan, toProductId == nil {
            throw PlayScenarioError("\(step): changePlan needs toProductId")
        }
        if let days, days < 0 || days > 3650 { throw PlayScenarioError("\(step): days must be 0 to 3650") }
        if let hours, !(hours >= 0 && hours <= 87_600) { throw PlayScenarioError("\(step): hours must be 0 to 87600") }
    }

    /// A Google enumeration's case written by its Swift name (`remorse`, `chargeback`, …).
    private static func named<T: CaseIterable>(
        _ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys, default value: T, step: String
    ) throws -> T {
        guard let name = try container.decodeIfPresent(String.self, forKey: key) else { return value }
        guard let match = T.allCases.first(where: { "\($0)" == name }) else {
            throw PlayScenarioError(
                "\(step): \(key.stringValue) \"\(name.prefix(64))\" is not one of "
                    + T.allCases.map { "\($0)" }.joined(separator: ", "))
        }
        return match
    }
}
