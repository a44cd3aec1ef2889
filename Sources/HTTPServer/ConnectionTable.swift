/// Every open TCP connection of a server and the rules that close some of them before
/// libmicrohttpd would: the request-head deadline, the minimum body rate, eviction of the
/// oldest waiting connections when the connection limit is near, and the per-address limit
/// (kept here rather than by libmicrohttpd, which refuses silently, so refusals are counted).
///
/// Why our own: libmicrohttpd's connection timeout is an *idle* timeout, reset by every byte,
/// so a client trickling one header byte every few seconds keeps its connection forever; and at
/// its connection limit it simply stops accepting, so idle keep-alive connections lock new
/// clients out. This table only keeps the books: each method takes the current instant and
/// returns the sockets to shut down; `ConnectionSupervisor` does the I/O under its lock.
///
/// Phases: a connection waits for a request head (since accept, or since its previous response
/// when kept alive), then reads a body (only tracked when a minimum rate applies), then is
/// busy (handler running or response being sent: never closed here), then waits again.
/// - Note: Value type; shared only inside `ConnectionSupervisor`'s lock.
struct ConnectionTable {
    /// The rules, fixed when the server starts.
    /// - Note: Immutable value; `Sendable`.
    struct Policy: Sendable {
        /// From accept (or from the end of the previous response) to a complete request head;
        /// `nil`: no deadline.
        var headTimeout: Duration?
        /// `nil`: a body may arrive as slowly as the idle timeout allows.
        var minimumBodyRate: HTTPServer.MinimumBodyRate?
        /// Above this many connections (not counting those already being closed), each new
        /// connection closes the oldest connection waiting for a request: kept-alive idle ones
        /// first, then ones that never completed a head.
        var evictionThreshold: Int
        /// The most connections from one client address (whole IPv6 addresses); a connection
        /// beyond it is closed as soon as it is accepted. 0: no limit.
        var maxConnectionsPerAddress = 0
    }

    enum Phase: Equatable {
        /// Waiting for a request head since `since`: accept (`reused` false) or the end of the
        /// previous response on a kept-alive connection.
        case awaitingHead(since: ContinuousClock.Instant, reused: Bool)
        /// Reading a body since the head arrived; `received` bytes so far.
        case readingBody(since: ContinuousClock.Instant, received: Int)
        /// Handler running or response being sent.
        case busy
        /// Shut down by this table; libmicrohttpd has yet to notice and close it.
        case closing
    }

    struct Connection {
        let socket: Int32
        var phase: Phase
        /// The client address it counts against, when the per-address limit applies.
        var address: [UInt8]? = nil
    }

    let policy: Policy
    private(set) var connections: [UInt64: Connection] = [:]
    /// Waiting for their first request head, oldest first.
    private var freshWaiting = OrderedIDSet()
    /// Kept alive after a response, waiting for the next head, oldest first.
    private var idleWaiting = OrderedIDSet()
    /// In `.readingBody`.
    private var bodies: Set<UInt64> = []
    private var closingCount = 0
    private var lastID: UInt64 = 0
    private var evicted = 0
    private var headTimeouts = 0
    private var slowBodies = 0
    private var addressRefusals = 0
    /// Open connections per client address (only while the per-address limit applies).
    private var perAddress: [[UInt8]: Int] = [:]

    init(policy: Policy) {
        self.policy = policy
    }

    var statistics: HTTPServer.ConnectionStatistics {
        HTTPServer.ConnectionStatistics(
            open: connections.count, evicted: evicted, headTimeouts: headTimeouts, slowBodies: slowBodies,
            addressRefusals: addressRefusals)
    }

    /// A connection was accepted from `address` (the client's address bytes; `nil`: unknown).
    /// Returns its id (never 0) and the sockets to shut down: the connection itself when its
    /// address already holds `maxConnectionsPerAddress`, else those evicted to make room.
    mutating func open(socket: Int32, address: [UInt8]? = nil, at now: ContinuousClock.Instant) -> (
        id: UInt64, close: [Int32]
    ) {
        lastID += 1
        let id = lastID
        var counted: [UInt8]?
        if let address, policy.maxConnectionsPerAddress > 0 {
            if perAddress[address, default: 0] >= policy.maxConnectionsPerAddress {
                connections[id] = Connection(socket: socket, phase: .closing)
                closingCount += 1
                addressRefusals += 1
                return (id, [socket])
            }
            perAddress[address, default: 0] += 1
            counted = address
        }
        connections[id] = Connection(socket: socket, phase: .awaitingHead(since: now, reused: false), address: counted)
        freshWaiting.append(id)
        var close: [Int32] = []
        while isCrowded {
            // Never the new connection itself: it has had no chance to send anything yet.
            guard let victim = idleWaiting.first ?? freshWaiting.first(excluding: id) else { break }
            close.append(markClosing(victim))
            evicted += 1
        }
        return (id, close)
    }

    /// The request head is complete. A body is tracked only when a minimum rate applies.
    mutating func headReceived(_ id: UInt64, expectingBody: Bool, at now: ContinuousClock.Instant) {
        guard case .awaitingHead = connections[id]?.phase else { return }
        freshWaiting.remove(id)
        idleWaiting.remove(id)
        if expectingBody, policy.minimumBodyRate != nil {
            connections[id]?.phase = .readingBody(since: now, received: 0)
            bodies.insert(id)
        } else {
            connections[id]?.phase = .busy
        }
    }

    mutating func bodyReceived(_ id: UInt64, bytes: Int) {
        guard case .readingBody(let since, let received) = connections[id]?.phase else { return }
        connections[id]?.phase = .readingBody(since: since, received: received &+ bytes)
    }

    /// The whole body is in (or the request was answered without reading it).
    mutating func bodyComplete(_ id: UInt64) {
        guard case .readingBody = connections[id]?.phase else { return }
        bodies.remove(id)
        connections[id]?.phase = .busy
    }

    /// Whether more connections are open than the eviction threshold (busy ones can push it
    /// there): responses then say `Connection: close`.
    var isCrowded: Bool { connections.count - closingCount > policy.evictionThreshold }

    /// A request finished (its response sent): the connection now waits for the next head,
    /// unless libmicrohttpd closes it. Returns the idle sockets to close when over the
    /// threshold: at libmicrohttpd's limit no new connection is accepted to trigger eviction,
    /// so connections turning idle must make the room themselves.
    mutating func responded(_ id: UInt64, at now: ContinuousClock.Instant) -> [Int32] {
        guard let phase = connections[id]?.phase, phase != .closing else { return [] }
        freshWaiting.remove(id)
        bodies.remove(id)
        connections[id]?.phase = .awaitingHead(since: now, reused: true)
        idleWaiting.append(id)
        var close: [Int32] = []
        while isCrowded, let victim = idleWaiting.first {
            close.append(markClosing(victim))
            evicted += 1
        }
        return close
    }

    /// libmicrohttpd closed the connection (its socket is still open until this returns).
    mutating func closed(_ id: UInt64) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        freshWaiting.remove(id)
        idleWaiting.remove(id)
        bodies.remove(id)
        if connection.phase == .closing { closingCount -= 1 }
        if let address = connection.address {
            let remaining = perAddress[address, default: 1] - 1
            perAddress[address] = remaining > 0 ? remaining : nil
        }
    }

    /// The sockets whose head deadline has passed or whose body is below the minimum rate.
    mutating func expire(at now: ContinuousClock.Instant) -> [Int32] {
        var close: [Int32] = []
        if let timeout = policy.headTimeout {
            // Both queues are in waiting order, so only their fronts can have expired.
            for fresh in [true, false] {
                while let id = fresh ? freshWaiting.first : idleWaiting.first,
                    case .awaitingHead(let since, _) = connections[id]?.phase, now - since >= timeout
                {
                    close.append(markClosing(id))
                    headTimeouts += 1
                }
            }
        }
        if let rate = policy.minimumBodyRate {
            for id in bodies {
                guard case .readingBody(let since, let received) = connections[id]?.phase else { continue }
                // Apache's mod_reqtimeout rule: a grace period, extended by one second per
                // `bytesPerSecond` bytes received.
                let allowed = rate.grace + .seconds(Double(received) / Double(rate.bytesPerSecond))
                if now - since > allowed {
                    close.append(markClosing(id))
                    slowBodies += 1
                }
            }
        }
        return close
    }

    private mutating func markClosing(_ id: UInt64) -> Int32 {
        freshWaiting.remove(id)
        idleWaiting.remove(id)
        bodies.remove(id)
        connections[id]?.phase = .closing
        closingCount += 1
        return connections[id]?.socket ?? -1
    }
}
