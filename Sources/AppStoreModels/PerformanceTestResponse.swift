/// The body of Initiate Performance Test: the test's parameters and its identifier for
/// Get Performance Test Results.
/// - Note: Immutable value; `Sendable`.
public struct PerformanceTestResponse: Sendable, Hashable, Codable {
    public var config: PerformanceTestConfig?
    public var requestId: String?

    public init(config: PerformanceTestConfig? = nil, requestId: String? = nil) {
        self.config = config
        self.requestId = requestId
    }
}
