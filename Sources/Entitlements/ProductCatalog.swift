/// One product as the app's developer configured it in App Store Connect, plus the
/// entitlements Storekeeper unlocks with it.
/// - Note: Immutable value; `Sendable`.
public struct CatalogProduct: Sendable, Hashable, Codable {
    public var productId: String
    public var kind: ProductKind
    /// Auto-renewable subscriptions only: the subscription group identifier.
    public var subscriptionGroup: String?
    /// Auto-renewable subscriptions only: Apple's service level in the group, 1 being the
    /// highest. Classifies a change as upgrade (to a lower number), downgrade or crossgrade.
    public var groupLevel: Int?
    /// Non-renewing subscriptions: the service each purchase adds (required to grant access).
    /// Auto-renewable subscriptions: the renewal period (tells a crossgrade of equal duration,
    /// which is immediate, from one of different duration, which waits for the renewal).
    public var duration: SubscriptionPeriod?
    /// Entitlements this product unlocks; one product may unlock several and several products
    /// may unlock one. Consumables never unlock entitlements (they cannot be restored).
    public var entitlementIds: [String]
    /// Price used when a transaction does not carry one (legacy receipts).
    public var referencePrice: Money?

    public init(
        productId: String, kind: ProductKind, subscriptionGroup: String? = nil, groupLevel: Int? = nil,
        duration: SubscriptionPeriod? = nil, entitlementIds: [String] = [], referencePrice: Money? = nil
    ) {
        self.productId = productId
        self.kind = kind
        self.subscriptionGroup = subscriptionGroup
        self.groupLevel = groupLevel
        self.duration = duration
        self.entitlementIds = entitlementIds
        self.referencePrice = referencePrice
    }
}

/// The products of one app, keyed by product id, and the app's commission terms.
/// - Note: Immutable value; `Sendable`.
public struct ProductCatalog: Sendable, Hashable, Codable {
    public var products: [String: CatalogProduct]
    /// App Store Small Business Program member: Apple's commission is 15 % on everything.
    public var isSmallBusinessProgram: Bool

    public init(products: [CatalogProduct], isSmallBusinessProgram: Bool = false) {
        var byId: [String: CatalogProduct] = [:]
        for product in products { byId[product.productId] = product }
        self.products = byId
        self.isSmallBusinessProgram = isSmallBusinessProgram
    }

    public subscript(productId: String) -> CatalogProduct? { products[productId] }
}
