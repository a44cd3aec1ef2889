/// `purchases.products.get`: one purchase of a one-time product. Unlike the subscription API
/// this older resource uses numbers for its states and millisecond strings for its times.
/// - Note: Immutable value; `Sendable`.
public struct ProductPurchase: Sendable, Hashable, Codable {
    /// `androidpublisher#productPurchase`.
    public var kind: String?
    public var purchaseTimeMillis: EpochMillisString?
    public var purchaseState: PlayRawEnum<ProductPurchaseState>?
    public var consumptionState: PlayRawEnum<ProductConsumptionState>?
    public var developerPayload: String?
    public var orderId: String?
    /// Set only for purchases outside the standard billing flow (test, promo, rewarded).
    public var purchaseType: PlayRawEnum<ProductPurchaseType>?
    public var acknowledgementState: PlayRawEnum<ProductAcknowledgementState>?
    public var purchaseToken: String?
    public var productId: String?
    /// Absent means 1.
    public var quantity: Int32?
    public var obfuscatedExternalAccountId: String?
    public var obfuscatedExternalProfileId: String?
    public var regionCode: String?
    /// The quantity not yet refunded (full and quantity-based partial refunds).
    public var refundableQuantity: Int32?

    public init(
        kind: String? = "androidpublisher#productPurchase", purchaseTimeMillis: EpochMillisString? = nil,
        purchaseState: PlayRawEnum<ProductPurchaseState>? = nil,
        consumptionState: PlayRawEnum<ProductConsumptionState>? = nil, developerPayload: String? = nil,
        orderId: String? = nil, purchaseType: PlayRawEnum<ProductPurchaseType>? = nil,
        acknowledgementState: PlayRawEnum<ProductAcknowledgementState>? = nil, purchaseToken: String? = nil,
        productId: String? = nil, quantity: Int32? = nil, obfuscatedExternalAccountId: String? = nil,
        obfuscatedExternalProfileId: String? = nil, regionCode: String? = nil, refundableQuantity: Int32? = nil
    ) {
        self.kind = kind
        self.purchaseTimeMillis = purchaseTimeMillis
        self.purchaseState = purchaseState
        self.consumptionState = consumptionState
        self.developerPayload = developerPayload
        self.orderId = orderId
        self.purchaseType = purchaseType
        self.acknowledgementState = acknowledgementState
        self.purchaseToken = purchaseToken
        self.productId = productId
        self.quantity = quantity
        self.obfuscatedExternalAccountId = obfuscatedExternalAccountId
        self.obfuscatedExternalProfileId = obfuscatedExternalProfileId
        self.regionCode = regionCode
        self.refundableQuantity = refundableQuantity
    }
}

/// `ProductPurchase.purchaseState`.
public enum ProductPurchaseState: Int32, Sendable, Hashable, Codable, CaseIterable {
    case purchased = 0
    case canceled = 1
    case pending = 2
}

/// `ProductPurchase.consumptionState`.
public enum ProductConsumptionState: Int32, Sendable, Hashable, Codable, CaseIterable {
    case yetToBeConsumed = 0
    case consumed = 1
}

/// `ProductPurchase.acknowledgementState`.
public enum ProductAcknowledgementState: Int32, Sendable, Hashable, Codable, CaseIterable {
    case yetToBeAcknowledged = 0
    case acknowledged = 1
}

/// `ProductPurchase.purchaseType`.
public enum ProductPurchaseType: Int32, Sendable, Hashable, Codable, CaseIterable {
    case test = 0
    case promo = 1
    case rewarded = 2
}
