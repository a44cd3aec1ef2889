/// The review state of a retention message.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum MessageState: String, Sendable, Hashable, Codable, CaseIterable {
    case pending = "PENDING"
    case approved = "APPROVED"
    case rejected = "REJECTED"
}
