/// One item of a subscription purchase: its product, until when it is paid for, and how it
/// renews (`autoRenewingPlan`) or does not (`prepaidPlan`).
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionPurchaseLineItem: Sendable, Hashable, Codable {
    public var productId: String?
    public var expiryTime: GoogleDateTime?
    public var latestSuccessfulOrderId: String?
    public var autoRenewingPlan: AutoRenewingPlan?
    public var prepaidPlan: PrepaidPlan?
    public var offerDetails: OfferDetails?
    public var offerPhase: OfferPhase?
    public var deferredItemRemoval: DeferredItemRemoval?
    public var deferredItemReplacement: DeferredItemReplacement?
    public var itemReplacement: ItemReplacement?
    public var signupPromotion: SignupPromotion?

    public init(
        productId: String? = nil, expiryTime: GoogleDateTime? = nil, latestSuccessfulOrderId: String? = nil,
        autoRenewingPlan: AutoRenewingPlan? = nil, prepaidPlan: PrepaidPlan? = nil, offerDetails: OfferDetails? = nil,
        offerPhase: OfferPhase? = nil, deferredItemRemoval: DeferredItemRemoval? = nil,
        deferredItemReplacement: DeferredItemReplacement? = nil, itemReplacement: ItemReplacement? = nil,
        signupPromotion: SignupPromotion? = nil
    ) {
        self.productId = productId
        self.expiryTime = expiryTime
        self.latestSuccessfulOrderId = latestSuccessfulOrderId
        self.autoRenewingPlan = autoRenewingPlan
        self.prepaidPlan = prepaidPlan
        self.offerDetails = offerDetails
        self.offerPhase = offerPhase
        self.deferredItemRemoval = deferredItemRemoval
        self.deferredItemReplacement = deferredItemReplacement
        self.itemReplacement = itemReplacement
        self.signupPromotion = signupPromotion
    }
}

/// A prepaid plan does not renew; it may be topped up after `allowExtendAfterTime`.
/// - Note: Immutable value; `Sendable`.
public struct PrepaidPlan: Sendable, Hashable, Codable {
    public var allowExtendAfterTime: GoogleDateTime?

    public init(allowExtendAfterTime: GoogleDateTime? = nil) { self.allowExtendAfterTime = allowExtendAfterTime }
}

/// The base plan and offer the item was bought with.
/// - Note: Immutable value; `Sendable`.
public struct OfferDetails: Sendable, Hashable, Codable {
    public var basePlanId: String?
    public var offerId: String?
    public var offerTags: [String]?

    public init(basePlanId: String? = nil, offerId: String? = nil, offerTags: [String]? = nil) {
        self.basePlanId = basePlanId
        self.offerId = offerId
        self.offerTags = offerTags
    }
}

/// The phase the item is in now: exactly one member is set (each an empty object except the
/// proration period).
/// - Note: Immutable value; `Sendable`.
public struct OfferPhase: Sendable, Hashable, Codable {
    public var basePrice: BasePriceOfferPhase?
    public var freeTrial: FreeTrialOfferPhase?
    public var introductoryPrice: IntroductoryPriceOfferPhase?
    public var prorationPeriod: ProrationPeriodOfferPhase?

    public init(
        basePrice: BasePriceOfferPhase? = nil, freeTrial: FreeTrialOfferPhase? = nil,
        introductoryPrice: IntroductoryPriceOfferPhase? = nil, prorationPeriod: ProrationPeriodOfferPhase? = nil
    ) {
        self.basePrice = basePrice
        self.freeTrial = freeTrial
        self.introductoryPrice = introductoryPrice
        self.prorationPeriod = prorationPeriod
    }
}

public struct BasePriceOfferPhase: Sendable, Hashable, Codable { public init() {} }
public struct FreeTrialOfferPhase: Sendable, Hashable, Codable { public init() {} }
public struct IntroductoryPriceOfferPhase: Sendable, Hashable, Codable { public init() {} }

/// A proration period after a plan change, and the phase it stands in for.
/// - Note: Immutable value; `Sendable`.
public struct ProrationPeriodOfferPhase: Sendable, Hashable, Codable {
    public var originalOfferPhaseType: PlayRawEnum<OriginalOfferPhaseType>?

    public init(originalOfferPhaseType: PlayRawEnum<OriginalOfferPhaseType>? = nil) {
        self.originalOfferPhaseType = originalOfferPhaseType
    }
}

/// `ProrationPeriodOfferPhase.originalOfferPhaseType`.
public enum OriginalOfferPhaseType: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "ORIGINAL_OFFER_PHASE_TYPE_UNSPECIFIED"
    case base = "BASE"
    case introductory = "INTRODUCTORY"
    case freeTrial = "FREE_TRIAL"
}

/// The item will be removed at the next renewal; an empty object.
public struct DeferredItemRemoval: Sendable, Hashable, Codable { public init() {} }

/// The item will be replaced by `productId` at the next renewal (a deferred downgrade).
/// - Note: Immutable value; `Sendable`.
public struct DeferredItemReplacement: Sendable, Hashable, Codable {
    public var productId: String?

    public init(productId: String? = nil) { self.productId = productId }
}

/// The item replaced another one (an upgrade or downgrade), and how.
/// - Note: Immutable value; `Sendable`.
public struct ItemReplacement: Sendable, Hashable, Codable {
    public var productId: String?
    public var basePlanId: String?
    public var offerId: String?
    public var replacementMode: PlayRawEnum<ReplacementMode>?

    public init(
        productId: String? = nil, basePlanId: String? = nil, offerId: String? = nil,
        replacementMode: PlayRawEnum<ReplacementMode>? = nil
    ) {
        self.productId = productId
        self.basePlanId = basePlanId
        self.offerId = offerId
        self.replacementMode = replacementMode
    }
}

/// `ItemReplacement.replacementMode`.
public enum ReplacementMode: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "REPLACEMENT_MODE_UNSPECIFIED"
    case withTimeProration = "WITH_TIME_PRORATION"
    case chargeProratedPrice = "CHARGE_PRORATED_PRICE"
    case withoutProration = "WITHOUT_PRORATION"
    case chargeFullPrice = "CHARGE_FULL_PRICE"
    case deferred = "DEFERRED"
    case keepExisting = "KEEP_EXISTING"
}

/// The promotion code used at sign-up: exactly one member is set.
/// - Note: Immutable value; `Sendable`.
public struct SignupPromotion: Sendable, Hashable, Codable {
    public var oneTimeCode: OneTimeCode?
    public var vanityCode: VanityCode?

    public init(oneTimeCode: OneTimeCode? = nil, vanityCode: VanityCode? = nil) {
        self.oneTimeCode = oneTimeCode
        self.vanityCode = vanityCode
    }
}

public struct OneTimeCode: Sendable, Hashable, Codable { public init() {} }

/// A reusable promotion code.
/// - Note: Immutable value; `Sendable`.
public struct VanityCode: Sendable, Hashable, Codable {
    public var promotionCode: String?

    public init(promotionCode: String? = nil) { self.promotionCode = promotionCode }
}
