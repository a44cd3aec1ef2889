import AppStoreModels

/// One in-app purchase product in the simulator's catalog.
///
/// Auto-renewable subscriptions belong to a subscription group and have a `level` in it
/// (1 is the highest service level, as in App Store Connect): moving to a lower number is an
/// upgrade, to a higher one a downgrade, to the same a crossgrade.
/// - Note: Immutable value; `Sendable`.
public struct SimulatedProduct: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case autoRenewable
        case nonRenewing
        case consumable
        case nonConsumable

        public var productType: ProductType {
            switch self {
            case .autoRenewable: .autoRenewableSubscription
            case .nonRenewing: .nonRenewingSubscription
            case .consumable: .consumable
            case .nonConsumable: .nonConsumable
            }
        }

        /// The value of the history filter `productType` that selects this kind.
        var historyFilter: String {
            switch self {
            case .autoRenewable: "AUTO_RENEWABLE"
            case .nonRenewing: "NON_RENEWABLE"
            case .consumable: "CONSUMABLE"
            case .nonConsumable: "NON_CONSUMABLE"
            }
        }
    }

    public var productId: String
    public var kind: Kind
    public var groupId: String?
    public var level: Int
    public var period: StorePeriod?
    public var prices: [Price]
    public var introductoryOffer: SubscriptionOffer?
    public var promotionalOffers: [SubscriptionOffer]
    public var offerCodes: [SubscriptionOffer]
    public var winBackOffers: [SubscriptionOffer]
    public var familyShareable: Bool

    public init(
        productId: String, kind: Kind, groupId: String? = nil, level: Int = 1, period: StorePeriod? = nil,
        prices: [Price], introductoryOffer: SubscriptionOffer? = nil, promotionalOffers: [SubscriptionOffer] = [],
        offerCodes: [SubscriptionOffer] = [], winBackOffers: [SubscriptionOffer] = [], familyShareable: Bool = false
    ) {
        self.productId = productId
        self.kind = kind
        self.groupId = groupId
        self.level = level
        self.period = period
        self.prices = prices
        self.introductoryOffer = introductoryOffer
        self.promotionalOffers = promotionalOffers
        self.offerCodes = offerCodes
        self.winBackOffers = winBackOffers
        self.familyShareable = familyShareable
    }

    private enum CodingKeys: String, CodingKey {
        case productId, kind, groupId, level, period, prices, introductoryOffer, promotionalOffers, offerCodes,
            winBackOffers, familyShareable
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        productId = try container.decode(String.self, forKey: .productId)
        kind = try container.decode(Kind.self, forKey: .kind)
        groupId = try container.decodeIfPresent(String.self, forKey: .groupId)
        level = try container.decodeIfPresent(Int.self, forKey: .level) ?? 1
        period = try container.decodeIfPresent(StorePeriod.self, forKey: .period)
        prices = try container.decodeIfPresent([Price].self, forKey: .prices) ?? []
        introductoryOffer = try container.decodeIfPresent(SubscriptionOffer.self, forKey: .introductoryOffer)
        promotionalOffers = try container.decodeIfPresent([SubscriptionOffer].self, forKey: .promotionalOffers) ?? []
        offerCodes = try container.decodeIfPresent([SubscriptionOffer].self, forKey: .offerCodes) ?? []
        winBackOffers = try container.decodeIfPresent([SubscriptionOffer].self, forKey: .winBackOffers) ?? []
        familyShareable = try container.decodeIfPresent(Bool.self, forKey: .familyShareable) ?? false
        if kind == .autoRenewable, groupId == nil || period == nil {
            throw DecodingError.dataCorruptedError(
                forKey: .groupId, in: container,
                debugDescription: "auto-renewable product \(productId) needs groupId and period")
        }
    }

    /// The catalog offer `kind` / `id` names, if the product has it.
    func offer(_ kind: OfferKind, id: String?) -> SubscriptionOffer? {
        switch kind {
        case .introductory: return introductoryOffer
        case .promotional: return promotionalOffers.first { $0.id == id }
        case .offerCode: return offerCodes.first { $0.id == id }
        case .winBack: return winBackOffers.first { $0.id == id }
        }
    }
}
