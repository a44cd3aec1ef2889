/// The body of Initiate Performance Test (Retention Messaging): the original transaction id of
/// an active sandbox auto-renewable subscription to use in the test requests.
/// - Note: Immutable value; `Sendable`.
public struct PerformanceTestRequest: Sendable, Hashable, Codable {
    public var originalTransactionId: String?

    public init(originalTransactionId: String? = nil) { self.originalTransactionId = originalTransactionId }
}
