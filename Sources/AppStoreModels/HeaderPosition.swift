/// Where a retention message's header appears: above the body or above the image.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum HeaderPosition: String, Sendable, Hashable, Codable, CaseIterable {
    case aboveBody = "ABOVE_BODY"
    case aboveImage = "ABOVE_IMAGE"
}
