/// The size class of an image uploaded for retention messaging.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum ImageSize: String, Sendable, Hashable, Codable, CaseIterable {
    case fullSize = "FULL_SIZE"
    case bulletPoint = "BULLET_POINT"
}
