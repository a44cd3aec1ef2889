import AppStoreModels

/// One signed version of one transaction, normalized from StoreKit 2 / App Store Server API
/// payloads or from legacy receipt entries.
///
/// Apple re-signs a transaction when it changes (refund, refund reversal, renewal-date
/// extension, upgrade): for one `transactionId` the version with the latest `signedDate` is
/// the truth, and the earlier versions are the history the engine reads events from.
/// - Note: Immutable value; `Sendable`.
public struct TransactionFact: Sendable, Hashable, Codable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    /// Apple's product type; used only when the catalog does not know `productId`.
    public var productKind: ProductKind?
    public var subscriptionGroup: String?
    public var purchaseDate: Timestamp
    public var originalPurchaseDate: Timestamp?
    public var expiresDate: Timestamp?
    /// When Apple signed this version (legacy: when the receipt was produced).
    public var signedDate: Timestamp
    public var revocationDate: Timestamp?
    /// Apple's code: 1 developer issue, 0 other.
    public var revocationReason: Int32?
    public var revocationType: RevocationType?
    /// Thousandths of a percent (50000 = 50 %); `nil` for a full refund.
    public var revocationPercentage: Int32?
    /// The subscription was replaced by a higher level (or equal-duration) product at once.
    public var isUpgraded: Bool
    public var periodType: PeriodType
    public var offerIdentifier: String?
    public var ownership: Ownership
    public var environment: AppStoreEnvironment
    /// Milliunits of `currency`; `nil` when Apple did not say (legacy receipts).
    public var price: Int64?
    public var currency: String?
    public var quantity: Int
    /// `PURCHASE` or `RENEWAL`; tells a billing recovery from a resubscription.
    public var transactionReason: TransactionReason?
    /// Apple's three-letter storefront (`USA`) of the purchase; `nil` when Apple did not say
    /// (legacy receipts). Selects the commission rates of analytics.
    public var storefront: String?

    public init(
        transactionId: String, originalTransactionId: String, productId: String, productKind: ProductKind? = nil,
        subscriptionGroup: String? = nil, purchaseDate: Timestamp, originalPurchaseDate: Timestamp? = nil,
        expiresDate: Timestamp? = nil, signedDate: Timestamp, revocationDate: Timestamp? = nil,
        revocationReason: Int32? = nil, revocationType: RevocationType? = nil, revocationPercentage: Int32? = nil,
        isUpgraded: Bool = false, periodType: PeriodType = .normal, offerIdentifier: String? = nil,
        ownership: Ownership = .purchased, environment: AppStoreEnvironment, price: Int64? = nil,
        currency: String? = nil, quantity: Int = 1, transactionReason: TransactionReason? = nil,
        storefront: String? = nil
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.productKind = productKind
        self.subscriptionGroup = subscriptionGroup
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.signedDate = signedDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.isUpgraded = isUpgraded
        self.periodType = periodType
        self.offerIdentifier = offerIdentifier
        self.ownership = ownership
        self.environment = environment
        self.price = price
        self.currency = currency
        self.quantity = quantity
        self.transactionReason = transactionReason
        self.storefront = storefront
    }

    /// Maps a verified StoreKit 2 transaction.
    public init(_ payload: JWSTransactionDecodedPayload) throws(EntitlementsError) {
        let kind = "transaction"
        guard let transactionId = payload.transactionId else {
            throw EntitlementsError(code: .missingField, field: "transactionId", payload: kind)
        }
        guard let productId = payload.productId else {
            throw EntitlementsError(code: .missingField, field: "productId", payload: kind)
        }
        guard let purchaseDate = payload.purchaseDate else {
            throw EntitlementsError(code: .missingField, field: "purchaseDate", payload: kind)
        }
        guard let signedDate = payload.signedDate else {
            throw EntitlementsError(code: .missingField, field: "signedDate", payload: kind)
        }
        let environment = try Self.environment(payload.environment, payload: kind)
        let periodType = PeriodType(
            offerType: payload.offerType?.value, discountType: payload.offerDiscountType?.value, price: payload.price)
        self.init(
            transactionId: transactionId,
            originalTransactionId: payload.originalTransactionId ?? transactionId,
            productId: productId,
            productKind: payload.type?.value.flatMap(ProductKind.init),
            subscriptionGroup: payload.subscriptionGroupIdentifier,
            purchaseDate: purchaseDate,
            originalPurchaseDate: payload.originalPurchaseDate,
            expiresDate: payload.expiresDate,
            signedDate: signedDate,
            revocationDate: payload.revocationDate,
            revocationReason: payload.revocationReason?.rawValue,
            revocationType: payload.revocationType?.value,
            revocationPercentage: payload.revocationPercentage,
            isUpgraded: payload.isUpgraded ?? false,
            periodType: periodType,
            offerIdentifier: payload.offerIdentifier,
            ownership: payload.inAppOwnershipType == .familyShared ? .familyShared : .purchased,
            environment: environment,
            price: payload.price ?? (periodType == .trial ? 0 : nil),
            currency: payload.currency,
            quantity: Int(payload.quantity ?? 1),
            transactionReason: payload.transactionReason?.value,
            storefront: payload.storefront)
    }

    /// Maps a legacy receipt entry (`latest_receipt_info`, `in_app`).
    public init(_ legacy: LegacyTransactionFact) {
        let periodType: PeriodType
        if legacy.isTrialPeriod {
            periodType = .trial
        } else if legacy.isInIntroOfferPeriod {
            periodType = .intro
        } else if legacy.offerCodeRefName != nil {
            periodType = .offerCode
        } else if legacy.promotionalOfferId != nil {
            periodType = .promotional
        } else {
            periodType = .normal
        }
        self.init(
            transactionId: legacy.transactionId,
            originalTransactionId: legacy.originalTransactionId,
            productId: legacy.productId,
            // Legacy entries carry no product type; only auto-renewable ones have an expiry
            // (`expires_date`), so that much is known even of a product the catalog lacks.
            productKind: legacy.expiresDate != nil ? .autoRenewable : nil,
            subscriptionGroup: legacy.subscriptionGroupIdentifier,
            purchaseDate: legacy.purchaseDate,
            originalPurchaseDate: legacy.originalPurchaseDate,
            expiresDate: legacy.expiresDate,
            signedDate: legacy.observedAt,
            revocationDate: legacy.cancellationDate,
            revocationReason: legacy.cancellationReason,
            // Legacy receipts say FAMILY_SHARED but not why access ended: for a family member
            // every cancellation is a Family Sharing revocation, never a refund of theirs.
            revocationType: legacy.cancellationDate == nil
                ? nil : (legacy.inAppOwnershipType == .familyShared ? .familyRevoke : .refundFull),
            isUpgraded: legacy.isUpgraded,
            periodType: periodType,
            offerIdentifier: legacy.offerCodeRefName ?? legacy.promotionalOfferId,
            ownership: legacy.inAppOwnershipType ?? .purchased,
            environment: legacy.environment,
            price: periodType == .trial ? 0 : nil,
            currency: nil,
            quantity: legacy.quantity,
            transactionReason: nil)
    }

    static func environment(
        _ raw: RawEnum<AppStoreEnvironment>?, payload: String
    ) throws(EntitlementsError) -> AppStoreEnvironment {
        guard let raw else { throw EntitlementsError(code: .missingField, field: "environment", payload: payload) }
        guard let value = raw.value else {
            throw EntitlementsError(code: .invalidValue, field: "environment", payload: payload)
        }
        return value
    }

    /// Access through this transaction was withdrawn for a reason other than a product change.
    var isRevokedOtherThanByUpgrade: Bool { revocationDate != nil && !isUpgraded }

    var revocation: Revocation? {
        guard let revokedAt = revocationDate, !isUpgraded else { return nil }
        if ownership == .familyShared || revocationType == .familyRevoke {
            return Revocation(
                kind: .familySharingRevoked, revokedAt: revokedAt, refundReason: nil, refundPercentage: nil)
        }
        return Revocation(
            kind: .refund, revokedAt: revokedAt, refundReason: RefundReason(appleCode: revocationReason),
            refundPercentage: revocationType == .refundProrated ? revocationPercentage : nil)
    }
}
