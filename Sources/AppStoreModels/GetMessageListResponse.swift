/// The body of Get Message List: every retention message of the app and its review state.
/// - Note: Immutable value; `Sendable`.
public struct GetMessageListResponse: Sendable, Hashable, Codable {
    public var messageIdentifiers: [GetMessageListResponseItem]?

    public init(messageIdentifiers: [GetMessageListResponseItem]? = nil) {
        self.messageIdentifiers = messageIdentifiers
    }
}
