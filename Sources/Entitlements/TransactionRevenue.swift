import AppStoreModels

/// The money of one transaction: what the customer paid, Apple's commission, what the
/// developer keeps, and what a refund took back. Figures are before taxes.
/// - Note: Immutable value; `Sendable`.
public struct TransactionRevenue: Sendable, Hashable, Codable {
    public var transactionId: String
    public var productId: String
    public var purchaseDate: Timestamp
    /// Zero for trials and Family Sharing; `nil` when neither Apple nor the catalog gave one.
    public var price: Money?
    /// Apple's commission in percent: 30, 15 (Small Business Program, or a subscriber past
    /// one year of paid service in the group), 0 when nothing was paid.
    public var commissionPercent: Int
    public var proceeds: Money?
    /// Positive amount taken back by a refund (full or prorated).
    public var refunded: Money?
    /// Proceeds after the refund.
    public var netProceeds: Money?
    /// Days of paid service in the subscription group accrued before this transaction.
    public var paidServiceDaysBefore: Int?
    public var reason: String
    /// Absent for the App Store, `play_store` for Google Play (`Marketplace`); there the
    /// commission is Google's service fee.
    public var store: Marketplace?

    public init(
        transactionId: String, productId: String, purchaseDate: Timestamp, price: Money?, commissionPercent: Int,
        proceeds: Money?, refunded: Money?, netProceeds: Money?, paidServiceDaysBefore: Int?, reason: String
    ) {
        self.transactionId = transactionId
        self.productId = productId
        self.purchaseDate = purchaseDate
        self.price = price
        self.commissionPercent = commissionPercent
        self.proceeds = proceeds
        self.refunded = refunded
        self.netProceeds = netProceeds
        self.paidServiceDaysBefore = paidServiceDaysBefore
        self.reason = reason
    }
}
