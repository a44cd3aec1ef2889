/// The body of Request a Test Notification: the token to pass to Get Test Notification Status.
/// - Note: Immutable value; `Sendable`.
public struct SendTestNotificationResponse: Sendable, Hashable, Codable {
    public var testNotificationToken: String?

    public init(testNotificationToken: String? = nil) {
        self.testNotificationToken = testNotificationToken
    }
}
