/// `LineItem` of an `Order`: one product the order charged, with its listing price, total and
/// tax, and the details of its kind (one of `oneTimePurchaseDetails`, `subscriptionDetails`,
/// `paidAppDetails`).
/// - Note: Immutable value; `Sendable`.
public struct LineItem: Sendable, Hashable, Codable {
    public var productId: String?
    public var productTitle: String?
    public var listingPrice: Money?
    public var total: Money?
    public var tax: Money?
    public var oneTimePurchaseDetails: OneTimePurchaseDetails?
    public var subscriptionDetails: SubscriptionDetails?
    public var paidAppDetails: PaidAppDetails?

    public init(
        productId: String? = nil, productTitle: String? = nil, listingPrice: Money? = nil, total: Money? = nil,
        tax: Money? = nil, oneTimePurchaseDetails: OneTimePurchaseDetails? = nil,
        subscriptionDetails: SubscriptionDetails? = nil, paidAppDetails: PaidAppDetails? = nil
    ) {
        self.productId = productId
        self.productTitle = productTitle
        self.listingPrice = listingPrice
        self.total = total
        self.tax = tax
        self.oneTimePurchaseDetails = oneTimePurchaseDetails
        self.subscriptionDetails = subscriptionDetails
        self.paidAppDetails = paidAppDetails
    }
}

/// `OneTimePurchaseDetails`.
/// - Note: Immutable value; `Sendable`.
public struct OneTimePurchaseDetails: Sendable, Hashable, Codable {
    public var offerId: String?
    public var purchaseOptionId: String?
    public var quantity: Int32?
    public var preorderDetails: PreorderDetails?
    public var rentalDetails: RentalDetails?

    public init(
        offerId: String? = nil, purchaseOptionId: String? = nil, quantity: Int32? = nil,
        preorderDetails: PreorderDetails? = nil, rentalDetails: RentalDetails? = nil
    ) {
        self.offerId = offerId
        self.purchaseOptionId = purchaseOptionId
        self.quantity = quantity
        self.preorderDetails = preorderDetails
        self.rentalDetails = rentalDetails
    }
}

/// `PreorderDetails` (no members yet).
public struct PreorderDetails: Sendable, Hashable, Codable { public init() {} }
/// `RentalDetails` (no members yet).
public struct RentalDetails: Sendable, Hashable, Codable { public init() {} }
/// `PaidAppDetails` (no members yet).
public struct PaidAppDetails: Sendable, Hashable, Codable { public init() {} }

/// `SubscriptionDetails`: the subscription period this order pays for.
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionDetails: Sendable, Hashable, Codable {
    public var basePlanId: String?
    public var offerId: String?
    public var offerPhase: PlayRawEnum<OrderOfferPhase>?
    public var offerPhaseDetails: OfferPhaseDetails?
    public var servicePeriodStartTime: GoogleDateTime?
    public var servicePeriodEndTime: GoogleDateTime?

    public init(
        basePlanId: String? = nil, offerId: String? = nil, offerPhase: PlayRawEnum<OrderOfferPhase>? = nil,
        offerPhaseDetails: OfferPhaseDetails? = nil, servicePeriodStartTime: GoogleDateTime? = nil,
        servicePeriodEndTime: GoogleDateTime? = nil
    ) {
        self.basePlanId = basePlanId
        self.offerId = offerId
        self.offerPhase = offerPhase
        self.offerPhaseDetails = offerPhaseDetails
        self.servicePeriodStartTime = servicePeriodStartTime
        self.servicePeriodEndTime = servicePeriodEndTime
    }
}

/// `SubscriptionDetails.offerPhase` and `ProrationPeriodDetails.originalOfferPhase`.
public enum OrderOfferPhase: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "OFFER_PHASE_UNSPECIFIED"
    case base = "BASE"
    case introductory = "INTRODUCTORY"
    case freeTrial = "FREE_TRIAL"
}

/// `OfferPhaseDetails`: which pricing phase the order funds (one member set).
/// - Note: Immutable value; `Sendable`.
public struct OfferPhaseDetails: Sendable, Hashable, Codable {
    public var baseDetails: BaseDetails?
    public var freeTrialDetails: FreeTrialDetails?
    public var introductoryPriceDetails: IntroductoryPriceDetails?
    public var prorationPeriodDetails: ProrationPeriodDetails?

    public init(
        baseDetails: BaseDetails? = nil, freeTrialDetails: FreeTrialDetails? = nil,
        introductoryPriceDetails: IntroductoryPriceDetails? = nil, prorationPeriodDetails: ProrationPeriodDetails? = nil
    ) {
        self.baseDetails = baseDetails
        self.freeTrialDetails = freeTrialDetails
        self.introductoryPriceDetails = introductoryPriceDetails
        self.prorationPeriodDetails = prorationPeriodDetails
    }
}

/// `BaseDetails` (no members yet).
public struct BaseDetails: Sendable, Hashable, Codable { public init() {} }
/// `FreeTrialDetails` (no members yet).
public struct FreeTrialDetails: Sendable, Hashable, Codable { public init() {} }
/// `IntroductoryPriceDetails` (no members yet).
public struct IntroductoryPriceDetails: Sendable, Hashable, Codable { public init() {} }

/// `ProrationPeriodDetails`: a period prorated by a plan change.
/// - Note: Immutable value; `Sendable`.
public struct ProrationPeriodDetails: Sendable, Hashable, Codable {
    public var originalOfferPhase: PlayRawEnum<OrderOfferPhase>?

    public init(originalOfferPhase: PlayRawEnum<OrderOfferPhase>? = nil) {
        self.originalOfferPhase = originalOfferPhase
    }
}
