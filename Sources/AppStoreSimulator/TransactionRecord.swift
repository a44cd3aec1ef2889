import AppStoreModels
import Foundation

/// The offer a transaction (or an upcoming renewal) was priced with.
struct AppliedOffer: Sendable, Hashable, Codable {
    var kind: OfferKind
    var id: String?
    var discountType: OfferDiscountType
    var period: StorePeriod
}

/// One transaction as the simulator's ledger keeps it. The signed payload is built from it at
/// signing time (`ApplePayloads`), so a refund or an extension changes what later lookups sign,
/// as at Apple.
struct TransactionRecord: Sendable, Hashable, Codable {
    var transactionId: String
    var originalTransactionId: String
    var webOrderLineItemId: String?
    var bundleId: String
    var customerId: String
    var productId: String
    var kind: SimulatedProduct.Kind
    var groupId: String?
    var purchaseDate: Timestamp
    var originalPurchaseDate: Timestamp
    var expiresDate: Timestamp?
    var quantity: Int32
    var appAccountToken: UUID?
    var ownership: InAppOwnershipType
    var revocationReason: RevocationReason?
    var revocationDate: Timestamp?
    var revocationType: RevocationType?
    var revocationPercentage: Int32?
    var isUpgraded: Bool
    var offer: AppliedOffer?
    var storefront: String
    var reason: TransactionReason
    var price: Int64
    var currency: String
    var appTransactionId: String
    var orderId: String
    /// When the record last changed: Apple sorts transaction history by it.
    var modifiedDate: Timestamp
    /// Set by Finish Transaction: finished consumables leave history v2 and the app receipt.
    var finished: Bool
    /// For a Family Sharing copy, the purchaser's transaction it mirrors.
    var familySourceTransactionId: String?
    /// Creation order, the tie-break of every sort.
    var sequence: Int

    var isRevoked: Bool { revocationDate != nil }
    var isRefund: Bool { revocationDate != nil && revocationType != .familyRevoke }
}

/// The state of one auto-renewable subscription (one original transaction): what the renewal
/// info and the subscription status report, and what drives renewals.
struct SubscriptionRecord: Sendable, Hashable, Codable {
    /// An offer that prices upcoming renewals (pay as you go, or redeemed for the next period).
    struct PendingOffer: Sendable, Hashable, Codable {
        var offer: AppliedOffer
        var remaining: Int
        var prices: [Price]
    }

    var originalTransactionId: String
    var bundleId: String
    var customerId: String
    var groupId: String
    var productId: String
    var autoRenewProductId: String
    var autoRenew: Bool
    var expiresDate: Timestamp
    var status: Status
    var expirationIntent: ExpirationIntent?
    var gracePeriodExpiresDate: Timestamp?
    var billingRetryEndsAt: Timestamp?
    var priceIncreaseStatus: PriceIncreaseStatus?
    var renewalOffer: PendingOffer?
    var recentSubscriptionStartDate: Timestamp
    var ownership: InAppOwnershipType
    /// For a Family Sharing copy, the purchaser's original transaction id.
    var familySource: String?
    var appAccountToken: UUID?
    var latestTransactionId: String
    var extensionDates: [Timestamp]
    var storefront: String
    var autoRenewStatusChangeDate: Timestamp?

    var isInBillingRetry: Bool { status == .billingRetry || status == .billingGracePeriod }
    /// Active, in grace or in billing retry: the customer still has (or may regain) this
    /// subscription, so a purchase in its group is a product change, not a new subscription.
    var isLive: Bool { status == .active || isInBillingRetry }
}
