/// The store a purchase was made in. A customer's purchases from both stores meet in one
/// `CustomerInfo`; each entitlement, subscription, purchase and event says which store it
/// comes from.
///
/// Encoded only for Google Play (`"store": "play_store"`): an absent `store` means the App
/// Store, so App Store output stays byte for byte what it was before Play existed.
/// - Note: Immutable value; `Sendable`.
public enum Marketplace: String, Sendable, Hashable, Codable, CaseIterable {
    case appStore = "app_store"
    case playStore = "play_store"

    /// The value stored in an optional `store` field: `nil` for the App Store.
    var encoded: Marketplace? { self == .appStore ? nil : self }
}
