/// Why a subscription expired.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum ExpirationIntent: Int32, Sendable, Hashable, Codable, CaseIterable {
    case customerCancelled = 1
    case billingError = 2
    case customerDidNotConsentToPriceIncrease = 3
    case productNotAvailable = 4
    case other = 5
}
