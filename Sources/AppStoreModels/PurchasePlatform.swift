/// The platform on which the customer first bought the app.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum PurchasePlatform: String, Sendable, Hashable, Codable, CaseIterable {
    case iOS = "iOS"
    case macOS = "macOS"
    case tvOS = "tvOS"
    case visionOS = "visionOS"
}
