import AppStoreModels

/// `purchaseState` of a ProductPurchase.
/// - Note: Immutable value; `Sendable`.
public enum PlayPurchaseState: Int, Sendable, Hashable, Codable, CaseIterable {
    case purchased = 0
    case canceled = 1
    case pending = 2
}

/// What `purchases.products.get` answered for one one-time product purchase token, and when.
/// The latest read of a token wins, ties by canonical JSON.
/// - Note: Immutable value; `Sendable`.
public struct PlayProductPurchaseFact: Sendable, Hashable, Codable {
    public var packageName: String
    public var purchaseToken: String
    public var productId: String
    public var orderId: String?
    public var readAt: Timestamp
    /// `purchaseTimeMillis`.
    public var purchaseTime: Timestamp
    /// `purchaseState`, unknown values kept.
    public var purchaseState: RawEnum<PlayPurchaseState>
    /// `consumptionState == 1`.
    public var isConsumed: Bool
    /// `acknowledgementState == 1`.
    public var isAcknowledged: Bool
    /// `quantity` (1 when absent).
    public var quantity: Int
    /// `purchaseType`: 0 test, 1 promo, 2 rewarded; absent for a standard purchase.
    public var purchaseType: Int?
    public var obfuscatedAccountId: String?
    public var obfuscatedProfileId: String?
    public var regionCode: String?
    /// What the customer paid when a source shows it (the orders API); otherwise the catalog's
    /// reference price is used.
    public var price: Money?

    public init(
        packageName: String, purchaseToken: String, productId: String, orderId: String?, readAt: Timestamp,
        purchaseTime: Timestamp, purchaseState: RawEnum<PlayPurchaseState>, isConsumed: Bool = false,
        isAcknowledged: Bool, quantity: Int = 1, purchaseType: Int? = nil, obfuscatedAccountId: String? = nil,
        obfuscatedProfileId: String? = nil, regionCode: String? = nil, price: Money? = nil
    ) {
        self.packageName = packageName
        self.purchaseToken = purchaseToken
        self.productId = productId
        self.orderId = orderId
        self.readAt = readAt
        self.purchaseTime = purchaseTime
        self.purchaseState = purchaseState
        self.isConsumed = isConsumed
        self.isAcknowledged = isAcknowledged
        self.quantity = quantity
        self.purchaseType = purchaseType
        self.obfuscatedAccountId = obfuscatedAccountId
        self.obfuscatedProfileId = obfuscatedProfileId
        self.regionCode = regionCode
        self.price = price
    }

    /// `purchaseType` 0: a license tester's purchase, the sandbox environment.
    public var environment: AppStoreEnvironment { purchaseType == 0 ? .sandbox : .production }
    /// Whether the purchase of these reads (one token's, any order) was charged: a read showed
    /// it purchased, or Google voided it (only a charge is voided). `purchaseState` 1
    /// (canceled) alone is not a charge: Google reports a pending purchase the buyer never
    /// paid as canceled (`ONE_TIME_PRODUCT_CANCELED`), as it reports a refunded one; the
    /// refund's voided record, polled as a safety net, tells the two apart.
    static func wasCharged(reads: [PlayProductPurchaseFact], voided: [PlayVoidedPurchaseFact]) -> Bool {
        !voided.isEmpty || reads.contains { $0.purchaseState.value == .purchased }
    }

    /// Promo codes and rewarded ads bring no money.
    var isPaid: Bool { purchaseType != 1 && purchaseType != 2 }
}
