/// How a transaction was revoked: full refund, prorated refund or Family Sharing revocation.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum RevocationType: String, Sendable, Hashable, Codable, CaseIterable {
    case refundFull = "REFUND_FULL"
    case refundProrated = "REFUND_PRORATED"
    case familyRevoke = "FAMILY_REVOKE"
}
