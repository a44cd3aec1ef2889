import AppStoreModels
import Foundation

/// Where the server reads the time and how its workers wait: injected so that tests (and the
/// simulator's accelerated clock) decide what "now" is. Handlers never call `Date()`.
/// - Note: Immutable value; `Sendable`; the closures must be thread-safe.
public struct ServerClock: Sendable {
    public var now: @Sendable () -> Timestamp
    /// Waits; throws `CancellationError` when the task is cancelled.
    public var sleep: @Sendable (Duration) async throws -> Void

    public init(
        now: @escaping @Sendable () -> Timestamp,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.now = now
        self.sleep = sleep
    }

    /// The wall clock and real sleeps.
    public static let system = ServerClock(now: { Timestamp(Date()) })
}
