/// Whether the customer consented to a price increase.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum PriceIncreaseStatus: Int32, Sendable, Hashable, Codable, CaseIterable {
    case customerHasNotResponded = 0
    case customerConsentedOrWasNotifiedWithoutNeedingConsent = 1
}
