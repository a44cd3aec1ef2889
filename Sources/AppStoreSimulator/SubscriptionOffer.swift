import AppStoreModels

/// A subscription offer in the catalog: the introductory offer, a promotional offer, an offer
/// code or a win-back offer, each with Apple's three payment modes.
///
/// `period` is one offer period; `periodCount` repeats it (pay as you go: three months at a
/// discount is `P1M` × 3). A free trial has no prices; the others charge `prices` per period
/// (pay as you go) or once (pay up front).
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionOffer: Sendable, Hashable, Codable {
    /// The offer identifier Apple signs as `offerIdentifier` (promotional, code, win-back);
    /// introductory offers have none.
    public var id: String?
    public var discountType: OfferDiscountType
    public var period: StorePeriod
    public var periodCount: Int
    public var prices: [Price]

    public init(
        id: String? = nil, discountType: OfferDiscountType, period: StorePeriod, periodCount: Int = 1,
        prices: [Price] = []
    ) {
        self.id = id
        self.discountType = discountType
        self.period = period
        self.periodCount = periodCount
        self.prices = prices
    }

    private enum CodingKeys: String, CodingKey { case id, discountType, period, periodCount, prices }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(String.self, forKey: .id)
        discountType = try container.decode(OfferDiscountType.self, forKey: .discountType)
        period = try container.decode(StorePeriod.self, forKey: .period)
        periodCount = try container.decodeIfPresent(Int.self, forKey: .periodCount) ?? 1
        prices = try container.decodeIfPresent([Price].self, forKey: .prices) ?? []
    }

    /// The whole offer's duration as Apple signs `offerPeriod`.
    var totalPeriod: StorePeriod { discountType == .payAsYouGo ? period.times(periodCount) : period }
}

/// Which kind of offer a purchase redeems (Apple's `offerType`).
public enum OfferKind: String, Sendable, Hashable, Codable {
    case introductory
    case promotional
    case offerCode
    case winBack

    var offerType: OfferType {
        switch self {
        case .introductory: .introductoryOffer
        case .promotional: .promotionalOffer
        case .offerCode: .subscriptionOfferCode
        case .winBack: .winBackOffer
        }
    }
}
