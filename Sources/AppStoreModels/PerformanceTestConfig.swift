/// The parameters Apple uses to load-test your realtime retention endpoint.
/// - Note: Immutable value; `Sendable`.
public struct PerformanceTestConfig: Sendable, Hashable, Codable {
    public var maxConcurrentRequests: Int64?
    public var totalRequests: Int64?
    /// Test duration in milliseconds.
    public var totalDuration: Int64?
    /// Slowest acceptable answer, in milliseconds.
    public var responseTimeThreshold: Int64?
    /// Minimum passing success rate, in percent.
    public var successRateThreshold: Int64?

    public init(
        maxConcurrentRequests: Int64? = nil, totalRequests: Int64? = nil, totalDuration: Int64? = nil,
        responseTimeThreshold: Int64? = nil, successRateThreshold: Int64? = nil
    ) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.totalRequests = totalRequests
        self.totalDuration = totalDuration
        self.responseTimeThreshold = responseTimeThreshold
        self.successRateThreshold = successRateThreshold
    }
}
