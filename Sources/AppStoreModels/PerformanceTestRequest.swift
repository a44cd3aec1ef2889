/// The body of Initiate Performance Test: a sandbox transaction to use in the test requests.
/// - Note: Immutable value; `Sendable`.
public struct PerformanceTestRequest: Sendable, Hashable, Codable {
    public var transactionId: String?

    public init(transactionId: String? = nil) { self.transactionId = transactionId }
}
