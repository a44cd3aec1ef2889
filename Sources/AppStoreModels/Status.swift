/// The status of an auto-renewable subscription.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum Status: Int32, Sendable, Hashable, Codable, CaseIterable {
    case active = 1
    case expired = 2
    case billingRetry = 3
    case billingGracePeriod = 4
    case revoked = 5
}
