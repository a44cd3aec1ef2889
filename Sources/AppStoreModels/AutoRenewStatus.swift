/// Whether an auto-renewable subscription will renew at the end of its period.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum AutoRenewStatus: Int32, Sendable, Hashable, Codable, CaseIterable {
    case off = 0
    case on = 1
}
