import AppStoreModels

/// What the customer may use for one entitlement id, and why.
/// - Note: Immutable value; `Sendable`.
public struct EntitlementInfo: Sendable, Hashable, Codable {
    public var entitlementId: String
    public var isActive: Bool
    /// When access ends; `nil` = lifetime (non-consumable). In a billing grace period this is
    /// the grace period's end, since access lasts until then.
    public var expiresDate: Timestamp?
    /// The product granting it: among active grants the one with the furthest expiry.
    public var productId: String
    public var transactionId: String
    public var originalTransactionId: String
    public var purchaseDate: Timestamp
    public var originalPurchaseDate: Timestamp?
    public var periodType: PeriodType
    public var willRenew: Bool
    public var unsubscribeDetectedAt: Timestamp?
    public var billingIssueDetectedAt: Timestamp?
    public var gracePeriodExpiresDate: Timestamp?
    public var ownership: Ownership
    public var environment: AppStoreEnvironment
    /// For support staff: why active or not.
    public var reason: String
    /// The store of the grant shown; absent for the App Store (`Marketplace`).
    public var store: Marketplace?

    public init(
        entitlementId: String, isActive: Bool, expiresDate: Timestamp?, productId: String, transactionId: String,
        originalTransactionId: String, purchaseDate: Timestamp, originalPurchaseDate: Timestamp?,
        periodType: PeriodType, willRenew: Bool, unsubscribeDetectedAt: Timestamp?,
        billingIssueDetectedAt: Timestamp?, gracePeriodExpiresDate: Timestamp?, ownership: Ownership,
        environment: AppStoreEnvironment, reason: String
    ) {
        self.entitlementId = entitlementId
        self.isActive = isActive
        self.expiresDate = expiresDate
        self.productId = productId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.periodType = periodType
        self.willRenew = willRenew
        self.unsubscribeDetectedAt = unsubscribeDetectedAt
        self.billingIssueDetectedAt = billingIssueDetectedAt
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.ownership = ownership
        self.environment = environment
        self.reason = reason
    }
}
