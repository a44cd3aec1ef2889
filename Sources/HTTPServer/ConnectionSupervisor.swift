import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Applies `ConnectionTable`'s rules to a running daemon: it is told of every connection
/// libmicrohttpd accepts, of each request's progress and of every close, and shuts down the
/// sockets the table gives up on, at accept time (eviction) and from a periodic sweep
/// (head deadline, minimum body rate).
///
/// Closing is `shutdown(2)`, never `close(2)`: libmicrohttpd owns the descriptor. Shutting down
/// both directions makes the connection's worker see end-of-stream at once and close it itself
/// (a connection waiting for a head or reading a body is always polled; busy ones, which may be
/// suspended, are never chosen). The shutdown runs while holding the table's lock, and
/// libmicrohttpd's "closed" notification, which comes before it closes the descriptor, takes
/// the same lock to remove the connection: so a descriptor shut down here still belongs to
/// that connection, never to a newer one that reused the number. No libmicrohttpd function is
/// called under that lock.
/// - Note: Thread-safe: the table is behind a lock; the sweep runs on a serial queue of its own.
final class ConnectionSupervisor: Sendable {
    private let table: Locked<ConnectionTable>
    private let sweepInterval: Duration?
    private let queue = DispatchQueue(label: "HTTPServer.ConnectionSupervisor")
    private let timer = Locked<DispatchSourceTimer?>(nil)
    /// `table.isCrowded` as of the last change to the table: read for every response without
    /// the lock, which the HTTP threads otherwise took a third time per request (and contended
    /// for). Relaxed: the flag only decides whether a response says `Connection: close`.
    private let crowded = Atomic<Bool>(false)
    /// Whether a minimum body rate is enforced (else bodies need no bookkeeping).
    let tracksBodies: Bool

    init(policy: ConnectionTable.Policy) {
        self.table = Locked(ConnectionTable(policy: policy))
        self.tracksBodies = policy.minimumBodyRate != nil
        // A sweep every eighth of the shortest deadline, within 50–500 ms: deadlines hold to
        // within that, at a few wake-ups per second.
        let shortest = [policy.headTimeout, policy.minimumBodyRate?.grace].compactMap { $0 }.min()
        self.sweepInterval = shortest.map { min(max($0 / 8, .milliseconds(50)), .milliseconds(500)) }
    }

    var statistics: HTTPServer.ConnectionStatistics { table.withLock { $0.statistics } }

    /// Starts the periodic sweep (when there is a deadline to enforce).
    func start() {
        guard let sweepInterval else { return }
        let source = DispatchSource.makeTimerSource(queue: queue)
        let nanoseconds = Int(sweepInterval / .nanoseconds(1))
        source.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        source.setEventHandler { [weak self] in self?.sweep() }
        timer.withLock { $0 = source }
        source.resume()
    }

    /// Stops the sweep and waits until none is running: after this returns, nothing here shuts
    /// down a socket except on libmicrohttpd's own callbacks.
    func stop() {
        let source = timer.withLock { timer in
            defer { timer = nil }
            return timer
        }
        guard let source else { return }
        source.cancel()
        queue.sync {}  // a handler already running finishes first
    }

    func sweep(at now: ContinuousClock.Instant = .now) {
        table.withLock { table in
            Self.shutDown(table.expire(at: now))
            crowded.store(table.isCrowded, ordering: .relaxed)
        }
    }

    /// A connection was accepted from `address` (its bytes); returns its id for the socket
    /// context.
    func opened(socket: Int32, address: [UInt8]?) -> UInt64 {
        let now = ContinuousClock.now
        return table.withLock { table in
            let (id, evicted) = table.open(socket: socket, address: address, at: now)
            Self.shutDown(evicted)
            crowded.store(table.isCrowded, ordering: .relaxed)
            return id
        }
    }

    func closed(_ id: UInt64) {
        table.withLock { table in
            table.closed(id)
            crowded.store(table.isCrowded, ordering: .relaxed)
        }
    }

    func headReceived(_ id: UInt64, expectingBody: Bool) {
        let now = ContinuousClock.now
        table.withLock { $0.headReceived(id, expectingBody: expectingBody, at: now) }
    }

    func bodyReceived(_ id: UInt64, bytes: Int) {
        table.withLock { $0.bodyReceived(id, bytes: bytes) }
    }

    func bodyComplete(_ id: UInt64) {
        table.withLock { $0.bodyComplete(id) }
    }

    func responded(_ id: UInt64) {
        let now = ContinuousClock.now
        table.withLock { table in
            Self.shutDown(table.responded(id, at: now))
            crowded.store(table.isCrowded, ordering: .relaxed)
        }
    }

    /// More connections are open than the eviction threshold.
    var isCrowded: Bool { crowded.load(ordering: .relaxed) }

    private static func shutDown(_ sockets: [Int32]) {
        for socket in sockets where socket >= 0 {
            _ = shutdown(socket, Int32(SHUT_RDWR))
        }
    }
}
