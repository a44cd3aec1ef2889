/// The platform on which the customer consumed the in-app purchase (consumption information V1).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum Platform: Int32, Sendable, Hashable, Codable, CaseIterable {
    case undeclared = 0
    case apple = 1
    case nonApple = 2
}
