import AppStoreModels
import Foundation
import Synchronization

/// Where the simulator reads "now". Everything else in the module takes the instant as an
/// argument (STYLE: time is an argument), so a test can travel in time and a demo can run on the
/// wall clock with compressed periods (see `TimeScale`).
/// - Note: Implementations are `Sendable` and thread-safe.
public protocol SimulatorClock: Sendable {
    var now: Timestamp { get }
}

/// Wall-clock time. The only place in the module that reads `Date()`.
/// - Note: Stateless; `Sendable`.
public struct RealTimeClock: SimulatorClock {
    public init() {}
    public var now: Timestamp { Timestamp(Date()) }
}

/// Time that moves only when told: tests and scenario files travel with `advance` / `set`.
/// - Note: Thread-safe: the instant sits behind a `Mutex`.
public final class ManualClock: SimulatorClock {
    private let instant: Mutex<Timestamp>

    public init(_ start: Timestamp) { instant = Mutex(start) }

    public var now: Timestamp { instant.withLock { $0 } }

    public func advance(milliseconds: Int64) {
        instant.withLock { $0 = $0.adding(milliseconds: milliseconds) }
    }

    public func set(_ value: Timestamp) { instant.withLock { $0 = value } }
}
