/// The body of Get Test Notification Status: the signed test notification and its delivery attempts.
/// - Note: Immutable value; `Sendable`.
public struct CheckTestNotificationResponse: Sendable, Hashable, Codable {
    public var signedPayload: String?
    public var sendAttempts: [SendAttemptItem]?

    public init(signedPayload: String? = nil, sendAttempts: [SendAttemptItem]? = nil) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}
