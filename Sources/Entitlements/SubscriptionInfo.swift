import AppStoreModels

/// Where an auto-renewable subscription stands at the evaluation instant.
/// - Note: Immutable value; `Sendable`.
public enum SubscriptionStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Paid (or trial) period running.
    case active = "ACTIVE"
    /// Renewal failed; Apple retries and the customer keeps access until the grace period ends.
    case inGracePeriod = "IN_GRACE_PERIOD"
    /// Renewal failed; Apple retries (up to 60 days); no access, but not churned yet.
    case inBillingRetry = "IN_BILLING_RETRY"
    case expired = "EXPIRED"
    case refunded = "REFUNDED"
    /// Family Sharing access withdrawn (not a refund).
    case revoked = "REVOKED"
    /// Replaced by another product of the group (upgrade, downgrade or crossgrade).
    case productChanged = "PRODUCT_CHANGED"
    /// Google Play: paused by the customer; no access until it resumes.
    case paused = "PAUSED"
    /// Google Play: bought with a pending payment; no access until it is paid.
    case pending = "PENDING"

    public var grantsAccess: Bool { self == .active || self == .inGracePeriod }
}

/// Whether the customer has answered a price increase that needs consent.
/// - Note: Immutable value; `Sendable`.
public enum PriceIncreaseConsent: String, Sendable, Hashable, Codable {
    case pending = "PENDING"
    case accepted = "ACCEPTED"
}

/// The latest state of one auto-renewable product for the customer.
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionInfo: Sendable, Hashable, Codable {
    public var productId: String
    public var subscriptionGroup: String?
    public var status: SubscriptionStatus
    public var isActive: Bool
    /// Latest transaction of this product.
    public var transactionId: String
    public var originalTransactionId: String
    public var purchaseDate: Timestamp
    public var originalPurchaseDate: Timestamp?
    public var expiresDate: Timestamp?
    public var periodType: PeriodType
    public var offerIdentifier: String?
    public var willRenew: Bool
    public var autoRenewProductId: String?
    public var pendingProductChange: ProductChange?
    public var unsubscribeDetectedAt: Timestamp?
    public var billingIssueDetectedAt: Timestamp?
    public var gracePeriodExpiresDate: Timestamp?
    public var expirationReason: ExpirationReason?
    public var priceIncreaseConsent: PriceIncreaseConsent?
    public var revocation: Revocation?
    public var ownership: Ownership
    public var environment: AppStoreEnvironment
    public var price: Money?
    public var reason: String
    /// `true` when the catalog does not list the product: it was read as a subscription from
    /// the transaction itself (Apple's `type`; legacy: its expiry) and grants nothing. Absent
    /// otherwise.
    public var isUnknownProduct: Bool?
    /// Absent for the App Store, `play_store` for Google Play (`Marketplace`).
    public var store: Marketplace?

    public init(
        productId: String, subscriptionGroup: String?, status: SubscriptionStatus, isActive: Bool,
        transactionId: String, originalTransactionId: String, purchaseDate: Timestamp,
        originalPurchaseDate: Timestamp?, expiresDate: Timestamp?, periodType: PeriodType, offerIdentifier: String?,
        willRenew: Bool, autoRenewProductId: String?, pendingProductChange: ProductChange?,
        unsubscribeDetectedAt: Timestamp?, billingIssueDetectedAt: Timestamp?, gracePeriodExpiresDate: Timestamp?,
        expirationReason: ExpirationReason?, priceIncreaseConsent: PriceIncreaseConsent?, revocation: Revocation?,
        ownership: Ownership, environment: AppStoreEnvironment, price: Money?, reason: String
    ) {
        self.productId = productId
        self.subscriptionGroup = subscriptionGroup
        self.status = status
        self.isActive = isActive
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.periodType = periodType
        self.offerIdentifier = offerIdentifier
        self.willRenew = willRenew
        self.autoRenewProductId = autoRenewProductId
        self.pendingProductChange = pendingProductChange
        self.unsubscribeDetectedAt = unsubscribeDetectedAt
        self.billingIssueDetectedAt = billingIssueDetectedAt
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.expirationReason = expirationReason
        self.priceIncreaseConsent = priceIncreaseConsent
        self.revocation = revocation
        self.ownership = ownership
        self.environment = environment
        self.price = price
        self.reason = reason
    }
}
