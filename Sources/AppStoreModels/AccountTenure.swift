/// The age of the customer's account, in days, for consumption information (V1).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum AccountTenure: Int32, Sendable, Hashable, Codable, CaseIterable {
    case undeclared = 0
    case zeroToThreeDays = 1
    case threeDaysToTenDays = 2
    case tenDaysToThirtyDays = 3
    case thirtyDaysToNinetyDays = 4
    case ninetyDaysToOneHundredEightyDays = 5
    case oneHundredEightyDaysToThreeHundredSixtyFiveDays = 6
    case greaterThanThreeHundredSixtyFiveDays = 7
}
