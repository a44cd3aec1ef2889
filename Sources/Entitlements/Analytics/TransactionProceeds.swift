import AppStoreModels

/// The analytics money of one transaction: what the customer paid, the commission Apple took
/// and why, what the developer kept, and what a refund took back. Amounts are milliunits of
/// `currency`; family-shared and free-trial transactions carry zeros.
/// - Note: Immutable value; `Sendable`.
public struct TransactionProceeds: Sendable, Hashable, Codable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var subscriptionGroup: String?
    public var storefront: String?
    public var purchaseDate: Timestamp
    /// `nil` when neither the transaction nor the catalog gave a price.
    public var currency: String?
    public var gross: Int64
    public var commission: CommissionRule.Decision
    public var proceeds: Int64
    /// Refunds only (never a Family Sharing revocation or an upgrade).
    public var refundedAt: Timestamp?
    public var refundReason: RefundReason?
    public var refunded: Int64
    public var refundedProceeds: Int64
    public var isFamilyShared: Bool
    public var isTrial: Bool

    /// A paid transaction: counts in revenue (not a trial, not family shared, a price above zero).
    public var isPaid: Bool { !isFamilyShared && !isTrial && gross > 0 }
}
