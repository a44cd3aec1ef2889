/// The payment mode of a subscription offer.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum OfferDiscountType: String, Sendable, Hashable, Codable, CaseIterable {
    case freeTrial = "FREE_TRIAL"
    case payAsYouGo = "PAY_AS_YOU_GO"
    case payUpFront = "PAY_UP_FRONT"
    case oneTime = "ONE_TIME"
}
