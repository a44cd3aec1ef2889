import AppStoreModels

/// `refundType` of a voided-purchase notification.
/// - Note: Immutable value; `Sendable`.
public enum PlayRefundType: Int, Sendable, Hashable, Codable, CaseIterable {
    /// `REFUND_TYPE_FULL_REFUND`: the purchase is fully voided; access ends.
    case full = 1
    /// `REFUND_TYPE_QUANTITY_BASED_PARTIAL_REFUND`: `voidedQuantity` of the purchase's quantity.
    case quantityBasedPartial = 2
}

/// `voidedSource`: who voided the purchase.
/// - Note: Immutable value; `Sendable`.
public enum PlayVoidedSource: Int, Sendable, Hashable, Codable, CaseIterable {
    case user = 0
    case developer = 1
    case google = 2
}

/// `productType` of a voided purchase.
/// - Note: Immutable value; `Sendable`.
public enum PlayProductType: Int, Sendable, Hashable, Codable, CaseIterable {
    case subscription = 1
    case oneTime = 2
}

/// A refund, chargeback or revocation of one Play purchase (`voidedpurchases.list`, a
/// `voidedPurchaseNotification`, or a `SUBSCRIPTION_REVOKED` notification mapped with
/// `refundType` full). Unique per (token, orderId, voidedAt).
///
/// A voided purchase of a token Storekeeper has not read yet is kept all the same: the list
/// does not say its product type (`nil`) and neither source says whether a license tester
/// bought it, so the store fills both in from the token's first read (`insertPlayFact`).
/// - Note: Immutable value; `Sendable`.
public struct PlayVoidedPurchaseFact: Sendable, Hashable, Codable {
    public var packageName: String
    public var purchaseToken: String
    public var orderId: String?
    /// `nil`: not known yet (listed by `voidedpurchases.list` before the token was read).
    public var productType: PlayProductType?
    /// `voidedTimeMillis`.
    public var voidedAt: Timestamp
    /// `voidedSource`, raw (unknown values kept).
    public var voidedSource: Int?
    /// `voidedReason`, raw: 0 other, 1 remorse, 2 not received, 3 defective, 4 accidental
    /// purchase, 5 fraud, 6 friendly fraud, 7 chargeback, 8 unacknowledged purchase.
    public var voidedReason: Int?
    /// `nil`: not said (voidedpurchases.list of a full refund); read as full.
    public var refundType: PlayRefundType?
    /// Quantity-based partial refunds: how many units were voided.
    public var voidedQuantity: Int?
    public var isTestPurchase: Bool

    public init(
        packageName: String, purchaseToken: String, orderId: String?, productType: PlayProductType?,
        voidedAt: Timestamp, voidedSource: Int?, voidedReason: Int?, refundType: PlayRefundType?,
        voidedQuantity: Int? = nil, isTestPurchase: Bool = false
    ) {
        self.packageName = packageName
        self.purchaseToken = purchaseToken
        self.orderId = orderId
        self.productType = productType
        self.voidedAt = voidedAt
        self.voidedSource = voidedSource
        self.voidedReason = voidedReason
        self.refundType = refundType
        self.voidedQuantity = voidedQuantity
        self.isTestPurchase = isTestPurchase
    }

    public var environment: AppStoreEnvironment { isTestPurchase ? .sandbox : .production }

    /// Whether it may void a purchase of `type`: its own type, or any while the type is unknown
    /// (a token is a subscription or a product, never both).
    func applies(to type: PlayProductType) -> Bool { productType == nil || productType == type }

    /// The order a voided record refunds, among `known` (the order ids the token's reads
    /// showed): the one it names; the latest (`latest`) when it names none (a revocation read
    /// from a notification); `nil` when it names an order no read showed (kept as a fact, but
    /// never charged to another order: a later read naming that order settles it).
    func refundedOrder(known: Set<String>, latest: String?) -> String? {
        guard let orderId else { return latest }
        return known.contains(orderId) ? orderId : nil
    }

    /// A partial refund leaves the purchase in force; anything else voids it.
    var isFull: Bool { refundType != .quantityBasedPartial }

    /// The refunded share of `quantity`, in thousandths of a percent (100000 = full); `nil`
    /// when a partial refund does not say how many units.
    func share(of quantity: Int) -> Int32? {
        if isFull { return 100_000 }
        guard let voided = voidedQuantity, quantity > 0 else { return nil }
        return Int32(min(100_000, Int64(voided) * 100_000 / Int64(quantity)))
    }

    /// Google's refund reasons in the engine's terms: "not received", "defective" are the
    /// developer's issue; the rest another reason.
    var refundReason: RefundReason {
        switch voidedReason {
        case 2?, 3?: return .developerIssue
        case .some: return .other
        case nil: return .unknown
        }
    }
}
