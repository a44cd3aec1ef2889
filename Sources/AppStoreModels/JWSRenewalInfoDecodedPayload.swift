import Foundation

/// Subscription renewal information as the App Store signs it (`signedRenewalInfo`).
/// - Note: Immutable value; `Sendable`.
public struct JWSRenewalInfoDecodedPayload: Sendable, Hashable, Codable {
    public var expirationIntent: RawEnum<ExpirationIntent>?
    public var originalTransactionId: String?
    public var autoRenewProductId: String?
    public var productId: String?
    public var autoRenewStatus: RawEnum<AutoRenewStatus>?
    public var isInBillingRetryPeriod: Bool?
    public var priceIncreaseStatus: RawEnum<PriceIncreaseStatus>?
    public var gracePeriodExpiresDate: Timestamp?
    public var offerType: RawEnum<OfferType>?
    public var offerIdentifier: String?
    public var signedDate: Timestamp?
    public var environment: RawEnum<AppStoreEnvironment>?
    public var recentSubscriptionStartDate: Timestamp?
    public var renewalDate: Timestamp?
    /// Renewal price in milliunits of `currency`.
    public var renewalPrice: Int64?
    public var currency: String?
    public var offerDiscountType: RawEnum<OfferDiscountType>?
    public var eligibleWinBackOfferIds: [String]?
    public var appTransactionId: String?
    public var offerPeriod: String?
    public var appAccountToken: UUID?
    public var renewalBillingPlanType: String?
    public var commitmentInfo: JSONValue?
    public var advancedCommerceInfo: JSONValue?

    public init() {}
}
