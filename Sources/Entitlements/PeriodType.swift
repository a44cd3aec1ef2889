import AppStoreModels

/// The kind of price the customer is paying in a subscription period.
/// - Note: Immutable value; `Sendable`.
public enum PeriodType: String, Sendable, Hashable, Codable, CaseIterable {
    case normal = "NORMAL"
    /// Introductory offer with the free-trial payment mode.
    case trial = "TRIAL"
    /// Introductory offer paid as you go or up front.
    case intro = "INTRO"
    case promotional = "PROMOTIONAL"
    case offerCode = "OFFER_CODE"
    case winBack = "WIN_BACK"

    /// Maps Apple's `offerType` and `offerDiscountType`. An introductory offer without a
    /// discount type but at price zero is a trial (older payloads omit the discount type).
    init(offerType: OfferType?, discountType: OfferDiscountType?, price: Int64?) {
        switch offerType {
        case .introductoryOffer?:
            if discountType == .freeTrial || (discountType == nil && price == 0) {
                self = .trial
            } else {
                self = .intro
            }
        case .promotionalOffer?: self = .promotional
        case .subscriptionOfferCode?: self = .offerCode
        case .winBackOffer?: self = .winBack
        case nil: self = .normal
        }
    }

    /// True for the introductory offer, which Apple grants once per subscription group.
    public var isIntroductory: Bool { self == .trial || self == .intro }

    /// Offers that Apple reports as redeemed (`OFFER_REDEEMED`): not the introductory offer.
    var isRedeemedOffer: Bool { self == .promotional || self == .offerCode || self == .winBack }
}

/// Whether the customer bought the product or has it through Family Sharing.
/// - Note: Immutable value; `Sendable`.
public enum Ownership: String, Sendable, Hashable, Codable, CaseIterable {
    case purchased = "PURCHASED"
    case familyShared = "FAMILY_SHARED"
}
