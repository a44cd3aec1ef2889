/// Response-time statistics of a performance test, in milliseconds.
/// - Note: Immutable value; `Sendable`.
public struct PerformanceTestResponseTimes: Sendable, Hashable, Codable {
    public var average: Int64?
    public var p50: Int64?
    public var p90: Int64?
    public var p95: Int64?
    public var p99: Int64?

    public init(
        average: Int64? = nil, p50: Int64? = nil, p90: Int64? = nil, p95: Int64? = nil,
        p99: Int64? = nil
    ) {
        self.average = average
        self.p50 = p50
        self.p90 = p90
        self.p95 = p95
        self.p99 = p99
    }
}
