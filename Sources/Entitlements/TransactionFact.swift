import AppStoreModels

/// One signed version of one transaction, normalized from StoreKit 2 / App Store Server API
/// payloads or from legacy receipt entries.
///
/// Apple re-signs a transaction when it changes (refund, refund reversal, renewal-date
/// extension, upgrade): for one `transactionId` the version with the latest `signedDate` is
/// the truth, and the earlier versions are the history the engine reads events from.
/// - Note: Immutable value; `Sendable`.
public struct TransactionFact: Sendable, Hashable, Codable {
    /// The stored members, shared by copies (`SharedMembers`): an evaluation copies each
    /// transaction many times over (ledger, chains, revenue, analytics), and inline each copy
    /// moved about 250 bytes and retained eight strings.
    struct Members: Sendable, Hashable, Codable {
        var transactionId: String
        var originalTransactionId: String
        var productId: String
        var productKind: ProductKind?
        var subscriptionGroup: String?
        var purchaseDate: Timestamp
        var originalPurchaseDate: Timestamp?
        var expiresDate: Timestamp?
        var signedDate: Timestamp
        var revocationDate: Timestamp?
        var revocationReason: Int32?
        var revocationType: RevocationType?
        var revocationPercentage: Int32?
        var isUpgraded: Bool
        var periodType: PeriodType
        var offerIdentifier: String?
        var ownership: Ownership
        var environment: AppStoreEnvironment
        var price: Int64?
        var currency: String?
        var quantity: Int
        var transactionReason: TransactionReason?
        var storefront: String?
    }

    private var members: SharedMembers<Members>

    public var transactionId: String {
        get { members.value.transactionId }
        set { members.value.transactionId = newValue }
    }
    public var originalTransactionId: String {
        get { members.value.originalTransactionId }
        set { members.value.originalTransactionId = newValue }
    }
    public var productId: String {
        get { members.value.productId }
        set { members.value.productId = newValue }
    }
    /// Apple's product type; used only when the catalog does not know `productId`.
    public var productKind: ProductKind? {
        get { members.value.productKind }
        set { members.value.productKind = newValue }
    }
    public var subscriptionGroup: String? {
        get { members.value.subscriptionGroup }
        set { members.value.subscriptionGroup = newValue }
    }
    public var purchaseDate: Timestamp {
        get { members.value.purchaseDate }
        set { members.value.purchaseDate = newValue }
    }
    public var originalPurchaseDate: Timestamp? {
        get { members.value.originalPurchaseDate }
        set { members.value.originalPurchaseDate = newValue }
    }
    public var expiresDate: Timestamp? {
        get { members.value.expiresDate }
        set { members.value.expiresDate = newValue }
    }
    /// When Apple signed this version (legacy: when the receipt was produced).
    public var signedDate: Timestamp {
        get { members.value.signedDate }
        set { members.value.signedDate = newValue }
    }
    public var revocationDate: Timestamp? {
        get { members.value.revocationDate }
        set { members.value.revocationDate = newValue }
    }
    /// Apple's code: 1 developer issue, 0 other.
    public var revocationReason: Int32? {
        get { members.value.revocationReason }
        set { members.value.revocationReason = newValue }
    }
    public var revocationType: RevocationType? {
        get { members.value.revocationType }
        set { members.value.revocationType = newValue }
    }
    /// Thousandths of a percent (50000 = 50 %); `nil` for a full refund.
    public var revocationPercentage: Int32? {
        get { members.value.revocationPercentage }
        set { members.value.revocationPercentage = newValue }
    }
    /// The subscription was replaced by a higher level (or equal-duration) product at once.
    public var isUpgraded: Bool {
        get { members.value.isUpgraded }
        set { members.value.isUpgraded = newValue }
    }
    public var periodType: PeriodType {
        get { members.value.periodType }
        set { members.value.periodType = newValue }
    }
    public var offerIdentifier: String? {
        get { members.value.offerIdentifier }
        set { members.value.offerIdentifier = newValue }
    }
    public var ownership: Ownership {
        get { members.value.ownership }
        set { members.value.ownership = newValue }
    }
    public var environment: AppStoreEnvironment {
        get { members.value.environment }
        set { members.value.environment = newValue }
    }
    /// Milliunits of `currency`; `nil` when Apple did not say (legacy receipts).
    public var price: Int64? {
        get { members.value.price }
        set { members.value.price = newValue }
    }
    public var currency: String? {
        get { members.value.currency }
        set { members.value.currency = newValue }
    }
    public var quantity: Int {
        get { members.value.quantity }
        set { members.value.quantity = newValue }
    }
    /// `PURCHASE` or `RENEWAL`; tells a billing recovery from a resubscription.
    public var transactionReason: TransactionReason? {
        get { members.value.transactionReason }
        set { members.value.transactionReason = newValue }
    }
    /// Apple's three-letter storefront (`USA`) of the purchase; `nil` when Apple did not say
    /// (legacy receipts). Selects the commission rates of analytics.
    public var storefront: String? {
        get { members.value.storefront }
        set { members.value.storefront = newValue }
    }

    /// The members as stored (tests compare them with the store's hand-written encoding).
    var storedMembers: Members { members.value }

    /// The members' coding, in the same container: the stored JSON is what it was when they
    /// were stored inline. (Equality and hashing are synthesized: the members'.)
    public init(from decoder: any Decoder) throws {
        members = try SharedMembers(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try members.encode(to: encoder)
    }

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
        members = SharedMembers(
            Members(
                transactionId: transactionId, originalTransactionId: originalTransactionId, productId: productId,
                productKind: productKind, subscriptionGroup: subscriptionGroup, purchaseDate: purchaseDate,
                originalPurchaseDate: originalPurchaseDate, expiresDate: expiresDate, signedDate: signedDate,
                revocationDate: revocationDate, revocationReason: revocationReason, revocationType: revocationType,
                revocationPercentage: revocationPercentage, isUpgraded: isUpgraded, periodType: periodType,
                offerIdentifier: offerIdentifier, ownership: ownership, environment: environment, price: price,
                currency: currency, quantity: quantity, transactionReason: transactionReason, storefront: storefront))
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
