/// Your preferred outcome for a refund request (consumption information V1).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum RefundPreferenceV1: Int32, Sendable, Hashable, Codable, CaseIterable {
    case undeclared = 0
    case preferGrant = 1
    case preferDecline = 2
    case noPreference = 3
}
