import AppStoreModels

/// One purchase of a non-renewing subscription, non-consumable or consumable.
/// - Note: Immutable value; `Sendable`.
public struct NonSubscriptionPurchase: Sendable, Hashable, Codable {
    public var productId: String
    public var kind: ProductKind
    public var transactionId: String
    public var originalTransactionId: String
    public var purchaseDate: Timestamp
    public var originalPurchaseDate: Timestamp?
    /// Non-renewing subscriptions: when this purchase's stacked service starts and ends.
    public var serviceStartsDate: Timestamp?
    public var expiresDate: Timestamp?
    public var isActive: Bool
    /// Consumables are recorded but never restorable; nor is a refunded or revoked purchase.
    public var isRestorable: Bool
    public var quantity: Int
    public var ownership: Ownership
    public var environment: AppStoreEnvironment
    public var price: Money?
    public var revocation: Revocation?
    public var reason: String
    /// `true` when the catalog does not list the product: its kind was read from the
    /// transaction (Apple's `type`; legacy: non-consumable unless it expires) and it grants
    /// nothing. Absent otherwise.
    public var isUnknownProduct: Bool?
    /// Absent for the App Store, `play_store` for Google Play (`Marketplace`).
    public var store: Marketplace?

    public init(
        productId: String, kind: ProductKind, transactionId: String, originalTransactionId: String,
        purchaseDate: Timestamp, originalPurchaseDate: Timestamp?, serviceStartsDate: Timestamp?,
        expiresDate: Timestamp?, isActive: Bool, isRestorable: Bool, quantity: Int, ownership: Ownership,
        environment: AppStoreEnvironment, price: Money?, revocation: Revocation?, reason: String
    ) {
        self.productId = productId
        self.kind = kind
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.serviceStartsDate = serviceStartsDate
        self.expiresDate = expiresDate
        self.isActive = isActive
        self.isRestorable = isRestorable
        self.quantity = quantity
        self.ownership = ownership
        self.environment = environment
        self.price = price
        self.revocation = revocation
        self.reason = reason
    }
}
