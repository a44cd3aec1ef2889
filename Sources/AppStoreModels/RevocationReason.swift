/// Why the App Store refunded or revoked a transaction.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum RevocationReason: Int32, Sendable, Hashable, Codable, CaseIterable {
    case other = 0
    case refundedDueToIssue = 1
}
