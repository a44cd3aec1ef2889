/// One attempt by the App Store to deliver a notification: when, and what happened.
/// - Note: Immutable value; `Sendable`.
public struct SendAttemptItem: Sendable, Hashable, Codable {
    public var attemptDate: Timestamp?
    public var sendAttemptResult: RawEnum<SendAttemptResult>?

    public init(attemptDate: Timestamp? = nil, sendAttemptResult: RawEnum<SendAttemptResult>? = nil) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }
}
