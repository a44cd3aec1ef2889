import Foundation

/// An Apple account in the simulator: its storefront, the `appAccountToken` the app gives its
/// purchases by default, its Family Sharing group, and whether its payment method fails.
/// - Note: Immutable value; `Sendable`.
public struct SimulatedCustomer: Sendable, Hashable, Codable {
    public var id: String
    public var storefront: String
    public var appAccountToken: UUID?
    public var familyGroup: String?
    /// While true, every renewal and billing retry fails (billing issue).
    public var billingFails: Bool

    public init(
        id: String, storefront: String = "USA", appAccountToken: UUID? = nil, familyGroup: String? = nil,
        billingFails: Bool = false
    ) {
        self.id = id
        self.storefront = storefront
        self.appAccountToken = appAccountToken
        self.familyGroup = familyGroup
        self.billingFails = billingFails
    }

    private enum CodingKeys: String, CodingKey { case id, storefront, appAccountToken, familyGroup, billingFails }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        storefront = try container.decodeIfPresent(String.self, forKey: .storefront) ?? "USA"
        appAccountToken = try container.decodeIfPresent(UUID.self, forKey: .appAccountToken)
        familyGroup = try container.decodeIfPresent(String.self, forKey: .familyGroup)
        billingFails = try container.decodeIfPresent(Bool.self, forKey: .billingFails) ?? false
    }
}
