import AppStoreModels

/// One transaction as a legacy verifyReceipt response lists it (`latest_receipt_info`,
/// `receipt.in_app`) or a V1 notification's `unified_receipt` carries it, with dates already
/// read from the `_ms` fields. The server fills it; the engine maps it to `TransactionFact`.
/// - Note: Immutable value; `Sendable`.
public struct LegacyTransactionFact: Sendable, Hashable, Codable {
    public var productId: String
    public var transactionId: String
    public var originalTransactionId: String
    public var webOrderLineItemId: String?
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Timestamp
    public var originalPurchaseDate: Timestamp?
    public var expiresDate: Timestamp?
    public var cancellationDate: Timestamp?
    /// `cancellation_reason`: 1 developer issue, 0 other.
    public var cancellationReason: Int32?
    public var isTrialPeriod: Bool
    public var isInIntroOfferPeriod: Bool
    public var isUpgraded: Bool
    public var inAppOwnershipType: Ownership?
    public var promotionalOfferId: String?
    public var offerCodeRefName: String?
    public var quantity: Int
    public var environment: AppStoreEnvironment
    /// When Apple produced the receipt this entry came from (`receipt_creation_date_ms`, or the
    /// V1 notification's arrival): orders versions of one transaction, as `signedDate` does.
    public var observedAt: Timestamp

    public init(
        productId: String, transactionId: String, originalTransactionId: String, webOrderLineItemId: String? = nil,
        subscriptionGroupIdentifier: String? = nil, purchaseDate: Timestamp, originalPurchaseDate: Timestamp? = nil,
        expiresDate: Timestamp? = nil, cancellationDate: Timestamp? = nil, cancellationReason: Int32? = nil,
        isTrialPeriod: Bool = false, isInIntroOfferPeriod: Bool = false, isUpgraded: Bool = false,
        inAppOwnershipType: Ownership? = nil, promotionalOfferId: String? = nil, offerCodeRefName: String? = nil,
        quantity: Int = 1, environment: AppStoreEnvironment, observedAt: Timestamp
    ) {
        self.productId = productId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.cancellationDate = cancellationDate
        self.cancellationReason = cancellationReason
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.isUpgraded = isUpgraded
        self.inAppOwnershipType = inAppOwnershipType
        self.promotionalOfferId = promotionalOfferId
        self.offerCodeRefName = offerCodeRefName
        self.quantity = quantity
        self.environment = environment
        self.observedAt = observedAt
    }
}

/// One `pending_renewal_info` entry of a legacy verifyReceipt response or V1 notification.
/// - Note: Immutable value; `Sendable`.
public struct LegacyRenewalFact: Sendable, Hashable, Codable {
    public var productId: String
    public var originalTransactionId: String
    public var autoRenewProductId: String?
    /// `auto_renew_status` "1" → true.
    public var autoRenewStatus: Bool?
    public var expirationIntent: Int32?
    public var isInBillingRetryPeriod: Bool?
    public var gracePeriodExpiresDate: Timestamp?
    public var priceConsentStatus: Int32?
    public var environment: AppStoreEnvironment
    /// When Apple produced the response this entry came from.
    public var observedAt: Timestamp

    public init(
        productId: String, originalTransactionId: String, autoRenewProductId: String? = nil,
        autoRenewStatus: Bool? = nil, expirationIntent: Int32? = nil, isInBillingRetryPeriod: Bool? = nil,
        gracePeriodExpiresDate: Timestamp? = nil, priceConsentStatus: Int32? = nil,
        environment: AppStoreEnvironment, observedAt: Timestamp
    ) {
        self.productId = productId
        self.originalTransactionId = originalTransactionId
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.priceConsentStatus = priceConsentStatus
        self.environment = environment
        self.observedAt = observedAt
    }
}
