/// The body of Get Performance Test Results.
///
/// `failures` is keyed by `SendAttemptResult` raw values; it stays a string-keyed map so that a
/// reason Apple adds later is kept (and so it encodes as a JSON object, not an array).
/// - Note: Immutable value; `Sendable`.
public struct PerformanceTestResultResponse: Sendable, Hashable, Codable {
    public var config: PerformanceTestConfig?
    public var target: String?
    public var result: RawEnum<PerformanceTestStatus>?
    /// Percentage of requests that succeeded.
    public var successRate: Int64?
    public var numPending: Int64?
    public var responseTimes: PerformanceTestResponseTimes?
    public var failures: [String: Int64]?

    public init(
        config: PerformanceTestConfig? = nil, target: String? = nil,
        result: RawEnum<PerformanceTestStatus>? = nil,
        successRate: Int64? = nil, numPending: Int64? = nil,
        responseTimes: PerformanceTestResponseTimes? = nil,
        failures: [String: Int64]? = nil
    ) {
        self.config = config
        self.target = target
        self.result = result
        self.successRate = successRate
        self.numPending = numPending
        self.responseTimes = responseTimes
        self.failures = failures
    }

    /// How many requests failed for `reason`; 0 when Apple reported none.
    public func failureCount(for reason: SendAttemptResult) -> Int64 {
        failures?[reason.rawValue] ?? 0
    }
}
