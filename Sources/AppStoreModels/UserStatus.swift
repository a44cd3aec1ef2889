/// The status of the customer's account (consumption information V1).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum UserStatus: Int32, Sendable, Hashable, Codable, CaseIterable {
    case undeclared = 0
    case active = 1
    case suspended = 2
    case terminated = 3
    case limitedAccess = 4
}
