/// How long the customer used the app, as a band (consumption information V1).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum PlayTime: Int32, Sendable, Hashable, Codable, CaseIterable {
    case undeclared = 0
    case zeroToFiveMinutes = 1
    case fiveToSixtyMinutes = 2
    case oneToSixHours = 3
    case sixHoursToTwentyFourHours = 4
    case oneDayToFourDays = 5
    case fourDaysToSixteenDays = 6
    case overSixteenDays = 7
}
