/// How much of a consumable in-app purchase the customer consumed (consumption information V1).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum ConsumptionStatus: Int32, Sendable, Hashable, Codable, CaseIterable {
    case undeclared = 0
    case notConsumed = 1
    case partiallyConsumed = 2
    case fullyConsumed = 3
}
