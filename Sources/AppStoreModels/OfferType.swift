/// The kind of subscription offer applied to a transaction or renewal.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum OfferType: Int32, Sendable, Hashable, Codable, CaseIterable {
    case introductoryOffer = 1
    case promotionalOffer = 2
    case subscriptionOfferCode = 3
    case winBackOffer = 4
}
