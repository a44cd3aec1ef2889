import AppStoreModels

/// The four kinds of App Store in-app purchase, as the catalog declares them.
/// - Note: Immutable value; `Sendable`.
public enum ProductKind: String, Sendable, Hashable, Codable, CaseIterable {
    case autoRenewable = "AUTO_RENEWABLE"
    case nonRenewing = "NON_RENEWING"
    case nonConsumable = "NON_CONSUMABLE"
    case consumable = "CONSUMABLE"

    /// Apple's `type` field, used only when a product is missing from the catalog.
    public init?(_ appleType: ProductType) {
        switch appleType {
        case .autoRenewableSubscription: self = .autoRenewable
        case .nonRenewingSubscription: self = .nonRenewing
        case .nonConsumable: self = .nonConsumable
        case .consumable: self = .consumable
        }
    }
}
