/// Your preferred outcome for a refund request (Send Consumption Information, API 1.19+).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum RefundPreference: String, Sendable, Hashable, Codable, CaseIterable {
    case decline = "DECLINE"
    case grantFull = "GRANT_FULL"
    case grantProrated = "GRANT_PRORATED"
}
