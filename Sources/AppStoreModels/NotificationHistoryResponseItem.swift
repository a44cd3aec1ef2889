/// One notification in the history: the signed V2 payload (unverified JWS) and every delivery attempt.
/// - Note: Immutable value; `Sendable`.
public struct NotificationHistoryResponseItem: Sendable, Hashable, Codable {
    public var signedPayload: String?
    public var sendAttempts: [SendAttemptItem]?

    public init(signedPayload: String? = nil, sendAttempts: [SendAttemptItem]? = nil) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}
