/// One entry of `pending_renewal_info`: what will happen at the next renewal of one subscription
/// (verifyReceipt and Server Notifications V1).
///
/// Apple writes the integer and boolean fields as strings (`"1"`); both forms decode, and
/// encoding writes Apple's string form.
/// - Note: Immutable value; `Sendable`.
public struct LegacyPendingRenewalInfo: Sendable, Hashable, Codable {
    public var autoRenewProductId: String?
    public var autoRenewStatus: RawEnum<AutoRenewStatus>?
    public var expirationIntent: RawEnum<ExpirationIntent>?
    public var gracePeriodExpiresDate: Timestamp?
    public var isInBillingRetryPeriod: Bool?
    public var offerCodeRefName: String?
    public var originalTransactionId: String?
    /// Whether the customer consented to a price increase (`1`) or not yet (`0`).
    public var priceConsentStatus: RawEnum<PriceIncreaseStatus>?
    public var priceIncreaseStatus: RawEnum<PriceIncreaseStatus>?
    public var productId: String?
    public var promotionalOfferId: String?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let fields = try LegacyDecodingContainer(decoder)
        autoRenewProductId = try fields.string("auto_renew_product_id")
        autoRenewStatus = try fields.rawEnum("auto_renew_status", AutoRenewStatus.self)
        expirationIntent = try fields.rawEnum("expiration_intent", ExpirationIntent.self)
        gracePeriodExpiresDate = try fields.date("grace_period_expires_date")
        isInBillingRetryPeriod = try fields.bool("is_in_billing_retry_period")
        offerCodeRefName = try fields.string("offer_code_ref_name")
        originalTransactionId = try fields.string("original_transaction_id")
        priceConsentStatus = try fields.rawEnum("price_consent_status", PriceIncreaseStatus.self)
        priceIncreaseStatus = try fields.rawEnum("price_increase_status", PriceIncreaseStatus.self)
        productId = try fields.string("product_id")
        promotionalOfferId = try fields.string("promotional_offer_id")
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = LegacyEncodingContainer(encoder)
        try fields.string(autoRenewProductId, "auto_renew_product_id")
        try fields.rawEnumAsString(autoRenewStatus, "auto_renew_status")
        try fields.rawEnumAsString(expirationIntent, "expiration_intent")
        try fields.date(gracePeriodExpiresDate, "grace_period_expires_date")
        try fields.boolAsString(isInBillingRetryPeriod, "is_in_billing_retry_period", .digit)
        try fields.string(offerCodeRefName, "offer_code_ref_name")
        try fields.string(originalTransactionId, "original_transaction_id")
        try fields.rawEnumAsString(priceConsentStatus, "price_consent_status")
        try fields.rawEnumAsString(priceIncreaseStatus, "price_increase_status")
        try fields.string(productId, "product_id")
        try fields.string(promotionalOfferId, "promotional_offer_id")
    }
}
