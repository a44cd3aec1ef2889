import AppStoreModels
import Storage
import Synchronization

/// What a worker knows of one queue lease while it sends: until when it holds (moved by each
/// renewal) and whether it was lost. Shared by the lane that sends and the heartbeat that renews.
/// - Note: Thread-safe: the state sits behind a `Mutex`.
final class HeldDeliveryLease: Sendable {
    let lease: DeliveryLease
    private let state: Mutex<(expiresAt: Timestamp, isHeld: Bool)>

    init(_ lease: DeliveryLease) {
        self.lease = lease
        state = Mutex((lease.expiresAt, true))
    }

    var expiresAt: Timestamp { state.withLock { $0.expiresAt } }
    var isHeld: Bool { state.withLock { $0.isHeld } }

    func renewed(until expiresAt: Timestamp) {
        state.withLock { $0.expiresAt = max($0.expiresAt, expiresAt) }
    }

    /// Another worker took the queue: nothing more is sent or given back under this lease.
    func lost() { state.withLock { $0.isHeld = false } }
}
