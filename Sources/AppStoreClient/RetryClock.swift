import Foundation

/// The time source of the retry loop: a monotonic reading for the total-time budget, the wall
/// clock for HTTP-date `Retry-After` values, and the pause itself. Injected so that tests run
/// retries without sleeping.
/// - Note: Implementations must be `Sendable` and usable from many tasks.
public protocol RetryClock: Sendable {
    /// Monotonic time since an arbitrary origin.
    func monotonicNow() -> Duration
    /// The wall-clock instant (only to read HTTP-date headers).
    func wallNow() -> Date
    /// Pauses the calling task; throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The real clock: `ContinuousClock` for budgets and pauses.
/// - Note: Stateless; `Sendable`.
public struct SystemRetryClock: RetryClock {
    private let origin = ContinuousClock.now

    public init() {}

    public func monotonicNow() -> Duration { ContinuousClock.now - origin }
    public func wallNow() -> Date { Date() }
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration, clock: .continuous)
    }
}
