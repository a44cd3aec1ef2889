import Foundation

/// A transaction as the App Store signs it (`signedTransactionInfo`, `Transaction.jwsRepresentation`).
///
/// Every field is optional because Apple omits what does not apply. Enumerations are `RawEnum`
/// so that a value Apple invents later decodes and re-encodes unchanged.
/// - Note: Immutable value; `Sendable`.
public struct JWSTransactionDecodedPayload: Sendable, Hashable, Codable {
    public var originalTransactionId: String?
    public var transactionId: String?
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Timestamp?
    public var originalPurchaseDate: Timestamp?
    public var expiresDate: Timestamp?
    public var quantity: Int32?
    public var type: RawEnum<ProductType>?
    public var appAccountToken: UUID?
    public var inAppOwnershipType: RawEnum<InAppOwnershipType>?
    public var signedDate: Timestamp?
    public var revocationReason: RawEnum<RevocationReason>?
    public var revocationDate: Timestamp?
    public var isUpgraded: Bool?
    public var offerType: RawEnum<OfferType>?
    public var offerIdentifier: String?
    public var environment: RawEnum<AppStoreEnvironment>?
    public var storefront: String?
    public var storefrontId: String?
    public var transactionReason: RawEnum<TransactionReason>?
    /// Price in milliunits of `currency` (10990 = 10.99).
    public var price: Int64?
    public var currency: String?
    public var offerDiscountType: RawEnum<OfferDiscountType>?
    public var appTransactionId: String?
    /// ISO 8601 duration of the offer (`P1Y`).
    public var offerPeriod: String?
    public var revocationType: RawEnum<RevocationType>?
    /// Refunded share in thousandths of a percent (50000 = 50 %).
    public var revocationPercentage: Int32?
    public var billingPlanType: String?
    public var commitmentInfo: JSONValue?
    public var advancedCommerceInfo: JSONValue?

    public init() {}
}
