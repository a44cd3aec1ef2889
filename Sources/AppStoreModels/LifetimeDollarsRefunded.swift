/// The customer's lifetime refunds in USD, as a band (consumption information V1).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum LifetimeDollarsRefunded: Int32, Sendable, Hashable, Codable, CaseIterable {
    case undeclared = 0
    case zeroDollars = 1
    case oneCentToFortyNineDollarsAndNinetyNineCents = 2
    case fiftyDollarsToNinetyNineDollarsAndNinetyNineCents = 3
    case oneHundredDollarsToFourHundredNinetyNineDollarsAndNinetyNineCents = 4
    case fiveHundredDollarsToNineHundredNinetyNineDollarsAndNinetyNineCents = 5
    case oneThousandDollarsToOneThousandNineHundredNinetyNineDollarsAndNinetyNineCents = 6
    case twoThousandDollarsOrGreater = 7
}
