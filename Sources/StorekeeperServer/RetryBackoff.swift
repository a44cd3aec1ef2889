import Foundation

/// When a failed piece of work is tried again: exponential from `initialMilliseconds`,
/// doubling per attempt up to `maxMilliseconds`, ± `jitter` of it drawn from `random` (so the
/// retries of many failures spread instead of arriving together). The job queue and the
/// webhook outbox both schedule their retries with it.
/// - Note: Immutable value; `Sendable` (`random` must be thread-safe).
public struct RetryBackoff: Sendable {
    public var initialMilliseconds: Int64
    public var maxMilliseconds: Int64
    /// The fraction of the delay added or removed at random.
    public var jitter: Double
    /// A value in `0..<1`.
    public var random: @Sendable () -> Double

    public init(
        initialMilliseconds: Int64, maxMilliseconds: Int64, jitter: Double, random: @escaping @Sendable () -> Double
    ) {
        self.initialMilliseconds = initialMilliseconds
        self.maxMilliseconds = maxMilliseconds
        self.jitter = jitter
        self.random = random
    }

    /// The delay before retry number `attempt` (1 for the first retry), at least 1 ms.
    public func milliseconds(attempt: Int) -> Int64 {
        let exponent = Double(max(0, min(attempt - 1, 30)))
        let base = min(Double(maxMilliseconds), Double(initialMilliseconds) * pow(2, exponent))
        let jittered = base * (1 + jitter * (2 * random() - 1))
        return max(1, Int64(jittered))
    }
}
