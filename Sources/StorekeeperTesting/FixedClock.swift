import AppStoreModels
import Synchronization

/// A clock tests move by hand (STYLE: time is an argument).
/// - Note: Thread-safe: the instant sits behind a `Mutex`.
public final class FixedClock: Sendable {
    private let instant: Mutex<Timestamp>

    public init(_ start: Timestamp) { instant = Mutex(start) }
    public convenience init(milliseconds: Int64) { self.init(Timestamp(millisecondsSince1970: milliseconds)) }

    public var now: Timestamp { instant.withLock { $0 } }
    public func advance(milliseconds: Int64) { instant.withLock { $0 = $0.adding(milliseconds: milliseconds) } }
    public func set(_ value: Timestamp) { instant.withLock { $0 = value } }
    public var function: @Sendable () -> Timestamp { { self.now } }
}
