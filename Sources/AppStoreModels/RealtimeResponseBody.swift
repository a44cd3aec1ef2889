/// Your answer to a realtime retention request: exactly one of a message, a switch-plan offer,
/// a promotional offer, or (Advanced Commerce) an offer kept as opaque JSON.
/// - Note: Immutable value; `Sendable`.
public struct RealtimeResponseBody: Sendable, Hashable, Codable {
    public var message: Message?
    public var alternateProduct: AlternateProduct?
    public var promotionalOffer: PromotionalOffer?
    public var advancedCommerceInfo: JSONValue?

    public init(
        message: Message? = nil, alternateProduct: AlternateProduct? = nil,
        promotionalOffer: PromotionalOffer? = nil,
        advancedCommerceInfo: JSONValue? = nil
    ) {
        self.message = message
        self.alternateProduct = alternateProduct
        self.promotionalOffer = promotionalOffer
        self.advancedCommerceInfo = advancedCommerceInfo
    }
}
