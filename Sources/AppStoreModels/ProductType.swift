/// The type of in-app purchase product (Apple: `type`).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum ProductType: String, Sendable, Hashable, Codable, CaseIterable {
    case autoRenewableSubscription = "Auto-Renewable Subscription"
    case nonConsumable = "Non-Consumable"
    case consumable = "Consumable"
    case nonRenewingSubscription = "Non-Renewing Subscription"
}
