/// Why a subscription's renewal date is being extended.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum ExtendReasonCode: Int32, Sendable, Hashable, Codable, CaseIterable {
    case undeclared = 0
    case customerSatisfaction = 1
    case other = 2
    case serviceIssueOrOutage = 3
}
