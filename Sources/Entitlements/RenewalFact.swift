import AppStoreModels

/// One signed snapshot of an auto-renewable subscription's renewal information
/// (`JWSRenewalInfoDecodedPayload`, legacy `pending_renewal_info`).
///
/// Snapshots are kept as a history ordered by `signedDate`: the latest says what will happen
/// next, the sequence says when the customer turned auto-renew off and on.
/// - Note: Immutable value; `Sendable`.
public struct RenewalFact: Sendable, Hashable, Codable {
    public var originalTransactionId: String
    public var productId: String
    public var autoRenewProductId: String?
    /// `nil` when Apple did not say.
    public var autoRenewEnabled: Bool?
    /// Apple's `expirationIntent` code (1…5).
    public var expirationIntent: Int32?
    public var isInBillingRetryPeriod: Bool
    public var gracePeriodExpiresDate: Timestamp?
    /// Apple's `priceIncreaseStatus` code: 0 pending consent, 1 consented or notified.
    public var priceIncreaseStatus: Int32?
    public var signedDate: Timestamp
    public var environment: AppStoreEnvironment

    public init(
        originalTransactionId: String, productId: String, autoRenewProductId: String? = nil,
        autoRenewEnabled: Bool? = nil, expirationIntent: Int32? = nil, isInBillingRetryPeriod: Bool = false,
        gracePeriodExpiresDate: Timestamp? = nil, priceIncreaseStatus: Int32? = nil, signedDate: Timestamp,
        environment: AppStoreEnvironment
    ) {
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewEnabled = autoRenewEnabled
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.priceIncreaseStatus = priceIncreaseStatus
        self.signedDate = signedDate
        self.environment = environment
    }

    /// Maps a verified StoreKit 2 renewal info.
    public init(_ payload: JWSRenewalInfoDecodedPayload) throws(EntitlementsError) {
        let kind = "renewalInfo"
        guard let originalTransactionId = payload.originalTransactionId else {
            throw EntitlementsError(code: .missingField, field: "originalTransactionId", payload: kind)
        }
        guard let productId = payload.productId else {
            throw EntitlementsError(code: .missingField, field: "productId", payload: kind)
        }
        guard let signedDate = payload.signedDate else {
            throw EntitlementsError(code: .missingField, field: "signedDate", payload: kind)
        }
        self.init(
            originalTransactionId: originalTransactionId,
            productId: productId,
            autoRenewProductId: payload.autoRenewProductId,
            autoRenewEnabled: payload.autoRenewStatus.map { $0 == .on },
            expirationIntent: payload.expirationIntent?.rawValue,
            isInBillingRetryPeriod: payload.isInBillingRetryPeriod ?? false,
            gracePeriodExpiresDate: payload.gracePeriodExpiresDate,
            priceIncreaseStatus: payload.priceIncreaseStatus?.rawValue,
            signedDate: signedDate,
            environment: try TransactionFact.environment(payload.environment, payload: kind))
    }

    /// Maps a legacy `pending_renewal_info` entry.
    public init(_ legacy: LegacyRenewalFact) {
        self.init(
            originalTransactionId: legacy.originalTransactionId,
            productId: legacy.productId,
            autoRenewProductId: legacy.autoRenewProductId,
            autoRenewEnabled: legacy.autoRenewStatus,
            expirationIntent: legacy.expirationIntent,
            isInBillingRetryPeriod: legacy.isInBillingRetryPeriod ?? false,
            gracePeriodExpiresDate: legacy.gracePeriodExpiresDate,
            priceIncreaseStatus: legacy.priceConsentStatus,
            signedDate: legacy.observedAt,
            environment: legacy.environment)
    }
}
