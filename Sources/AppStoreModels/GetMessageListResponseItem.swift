import Foundation

/// One uploaded retention message: identifier and review state.
/// - Note: Immutable value; `Sendable`.
public struct GetMessageListResponseItem: Sendable, Hashable, Codable {
    public var messageIdentifier: UUID?
    public var messageState: RawEnum<MessageState>?

    public init(messageIdentifier: UUID? = nil, messageState: RawEnum<MessageState>? = nil) {
        self.messageIdentifier = messageIdentifier
        self.messageState = messageState
    }
}
