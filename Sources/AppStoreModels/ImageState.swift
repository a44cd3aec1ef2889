/// The review state of an image uploaded for retention messaging.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum ImageState: String, Sendable, Hashable, Codable, CaseIterable {
    case pending = "PENDING"
    case approved = "APPROVED"
    case rejected = "REJECTED"
}
