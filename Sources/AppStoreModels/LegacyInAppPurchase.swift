/// One in-app purchase in a legacy receipt: an entry of `receipt.in_app` or of
/// `latest_receipt_info` (verifyReceipt and Server Notifications V1). Apple documents both with
/// the same fields.
///
/// Whatever form Apple used (`"1"` or `1`, `"true"` or `true`, `x_ms`, GMT or Pacific text), the
/// values read as typed `Int64`, `Bool` and `Timestamp`; encoding writes Apple's own form (strings,
/// and every date three times) so that the simulator answers like Apple.
/// - Note: Immutable value; `Sendable`.
public struct LegacyInAppPurchase: Sendable, Hashable, Codable {
    public var quantity: Int64?
    public var productId: String?
    public var transactionId: String?
    public var originalTransactionId: String?
    public var purchaseDate: Timestamp?
    public var originalPurchaseDate: Timestamp?
    public var expiresDate: Timestamp?
    public var webOrderLineItemId: String?
    public var isTrialPeriod: Bool?
    public var isInIntroOfferPeriod: Bool?
    /// When Apple refunded or revoked the purchase.
    public var cancellationDate: Timestamp?
    /// `1`: the customer reported an issue with the app; `0`: another reason.
    public var cancellationReason: RawEnum<RevocationReason>?
    public var promotionalOfferId: String?
    public var offerCodeRefName: String?
    public var subscriptionGroupIdentifier: String?
    public var inAppOwnershipType: RawEnum<InAppOwnershipType>?
    /// The purchase was superseded by an upgrade to another subscription in the group.
    public var isUpgraded: Bool?
    /// Kept as text: legacy receipts are not validated by Apple's servers for this field.
    public var appAccountToken: String?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let fields = try LegacyDecodingContainer(decoder)
        quantity = try fields.int64("quantity")
        productId = try fields.string("product_id")
        transactionId = try fields.string("transaction_id")
        originalTransactionId = try fields.string("original_transaction_id")
        purchaseDate = try fields.date("purchase_date")
        originalPurchaseDate = try fields.date("original_purchase_date")
        expiresDate = try fields.date("expires_date")
        webOrderLineItemId = try fields.string("web_order_line_item_id")
        isTrialPeriod = try fields.bool("is_trial_period")
        isInIntroOfferPeriod = try fields.bool("is_in_intro_offer_period")
        cancellationDate = try fields.date("cancellation_date")
        cancellationReason = try fields.rawEnum("cancellation_reason", RevocationReason.self)
        promotionalOfferId = try fields.string("promotional_offer_id")
        offerCodeRefName = try fields.string("offer_code_ref_name")
        subscriptionGroupIdentifier = try fields.string("subscription_group_identifier")
        inAppOwnershipType = try fields.rawEnum("in_app_ownership_type", InAppOwnershipType.self)
        isUpgraded = try fields.bool("is_upgraded")
        appAccountToken = try fields.string("app_account_token")
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = LegacyEncodingContainer(encoder)
        try fields.int64AsString(quantity, "quantity")
        try fields.string(productId, "product_id")
        try fields.string(transactionId, "transaction_id")
        try fields.string(originalTransactionId, "original_transaction_id")
        try fields.date(purchaseDate, "purchase_date")
        try fields.date(originalPurchaseDate, "original_purchase_date")
        try fields.date(expiresDate, "expires_date")
        try fields.string(webOrderLineItemId, "web_order_line_item_id")
        try fields.boolAsString(isTrialPeriod, "is_trial_period", .word)
        try fields.boolAsString(isInIntroOfferPeriod, "is_in_intro_offer_period", .word)
        try fields.date(cancellationDate, "cancellation_date")
        try fields.rawEnumAsString(cancellationReason, "cancellation_reason")
        try fields.string(promotionalOfferId, "promotional_offer_id")
        try fields.string(offerCodeRefName, "offer_code_ref_name")
        try fields.string(subscriptionGroupIdentifier, "subscription_group_identifier")
        try fields.rawEnum(inAppOwnershipType, "in_app_ownership_type")
        try fields.boolAsString(isUpgraded, "is_upgraded", .word)
        try fields.string(appAccountToken, "app_account_token")
    }
}

extension Array where Element == LegacyInAppPurchase {
    /// Oldest purchase first. Apple documents `latest_receipt_info` as sorted but has shipped it in
    /// other orders, so callers sort themselves. Entries without a purchase date come first; equal
    /// dates are ordered by transaction ID (numerically when both are numbers) so the result is
    /// the same for any input order.
    public func sortedByPurchaseDate() -> [LegacyInAppPurchase] {
        sorted { lhs, rhs in
            let left = lhs.purchaseDate?.millisecondsSince1970 ?? .min
            let right = rhs.purchaseDate?.millisecondsSince1970 ?? .min
            if left != right { return left < right }
            let leftId = lhs.transactionId ?? ""
            let rightId = rhs.transactionId ?? ""
            if let leftNumber = UInt64(leftId), let rightNumber = UInt64(rightId),
                leftNumber != rightNumber
            {
                return leftNumber < rightNumber
            }
            return leftId < rightId
        }
    }

    /// The entry with the latest purchase date (ties broken as in `sortedByPurchaseDate()`).
    public var mostRecentPurchase: LegacyInAppPurchase? { sortedByPurchaseDate().last }
}
