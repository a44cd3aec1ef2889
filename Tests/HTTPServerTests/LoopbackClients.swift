import Foundation

@testable import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// Client sockets for connection floods: nonblocking, bound to a chosen loopback source
/// address (Linux routes all of 127/8 to `lo`), so that attackers and the normal client are
/// different addresses as they would be on a network.
enum LoopbackSocket {
    /// A nonblocking TCP socket from `source` (e.g. `127.0.0.2`) connecting to 127.0.0.1:`port`;
    /// the connection may still be in progress. Nil when no socket could be made.
    static func open(port: UInt16, from source: String?) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                close(descriptor)
                return nil
            }
        }
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 || errno == EINPROGRESS else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Whether the peer has closed (or reset) the connection; never blocks.
    static func isClosed(_ descriptor: Int32) -> Bool {
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        if count == 0 { return true }
        if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN }
        return false
    }

    /// Sends what the socket takes now; false when nothing could be sent.
    static func send(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Waits up to `timeout` for `events` on `descriptor`.
    static func wait(_ descriptor: Int32, for events: Int32, timeout: TimeInterval) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(events), revents: 0)
        return poll(&entry, 1, Int32(max(0, timeout) * 1000)) > 0
    }

    /// Reads one whole response (or until the peer closes) within `deadline`.
    static func readResponse(_ descriptor: Int32, until deadline: Date) -> RawResponse? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if let response = RawResponse.parse(data) { return response }
            guard wait(descriptor, for: Int32(POLLIN), timeout: deadline.timeIntervalSinceNow) else { return nil }
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count == 0 { return RawResponse.parse(data) }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { continue }
                return nil
            }
            data.append(buffer, count: count)
        }
    }

    /// The address of attacker `index` when `perAddress` share one: 127.0.0.2, 127.0.0.3, …
    static func attackerAddress(_ index: Int, perAddress: Int, first: Int = 2) -> String {
        let number = first + index / perAddress
        return "127.0.\(number >> 8).\(number & 255)"
    }

    /// Raises this process's soft open-file limit to its hard limit: a flood test holds the
    /// attackers' sockets and the server's at once.
    static func raiseOpenFileLimit() {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(resource, &limit)
    }
}

/// The normal client of a flood test: one `GET` per fresh connection from 127.0.0.1 with
/// `Connection: close`, timed from `connect` to the whole response.
enum NormalClient {
    /// Seconds for one request, or nil when it was not answered 200 within `timeout`.
    static func timedRequest(port: UInt16, path: String = "/health", timeout: TimeInterval) -> TimeInterval? {
        let started = Date()
        let deadline = started.addingTimeInterval(timeout)
        guard let descriptor = LoopbackSocket.open(port: port, from: nil) else { return nil }
        defer { close(descriptor) }
        guard LoopbackSocket.wait(descriptor, for: Int32(POLLOUT), timeout: timeout),
            LoopbackSocket.send(descriptor, Array("GET \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".utf8)),
            let response = LoopbackSocket.readResponse(descriptor, until: deadline), response.status == 200
        else { return nil }
        return Date().timeIntervalSince(started)
    }

    /// `count` requests `interval` apart; stops early after `maxFailures` unanswered ones (a
    /// locked-out client would otherwise take `count` × `timeout`). Nil entries are failures.
    static func measure(
        port: UInt16, count: Int, interval: TimeInterval, timeout: TimeInterval = 1, maxFailures: Int = 5
    ) -> [TimeInterval?] {
        var results: [TimeInterval?] = []
        for _ in 0..<count {
            let result = timedRequest(port: port, timeout: timeout)
            results.append(result)
            if results.filter({ $0 == nil }).count >= maxFailures { break }
            Thread.sleep(forTimeInterval: interval)
        }
        return results
    }

    /// Nearest-rank percentile of answered requests in milliseconds; failures count as infinite.
    static func percentile(_ results: [TimeInterval?], _ fraction: Double) -> Double {
        let sorted = results.map { $0.map { $0 * 1000 } ?? .infinity }.sorted()
        guard !sorted.isEmpty else { return .infinity }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[max(0, min(sorted.count - 1, rank - 1))]
    }
}

/// Slowloris: keeps `connections` sockets open, each sending a request head one byte per round
/// and never finishing it; a socket the server closes is replaced at the next round, as the
/// real tool does. Runs on a thread of its own until `stop()`.
/// - Note: Thread-safe: counters and the stop flag are behind a lock; the sockets are touched
///   only by the flood's own thread.
final class SlowHeaderFlood: Sendable {
    struct Counts: Sendable, Equatable {
        var open = 0
        /// Sockets the server closed (each then replaced).
        var closedByServer = 0
    }

    let port: UInt16
    let connections: Int
    let perAddress: Int
    let round: TimeInterval
    private let state = Locked((counts: Counts(), stopping: false, finished: false))

    init(port: UInt16, connections: Int, perAddress: Int, round: TimeInterval = 0.5) {
        self.port = port
        self.connections = connections
        self.perAddress = perAddress
        self.round = round
    }

    var counts: Counts { state.withLock { $0.counts } }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "SlowHeaderFlood"
        thread.start()
    }

    /// Stops the flood, closes its sockets and returns its counts.
    func stop() -> Counts {
        state.withLock { $0.stopping = true }
        while !state.withLock({ $0.finished }) { Thread.sleep(forTimeInterval: 0.01) }
        return counts
    }

    private func run() {
        let head = Array("GET /health HTTP/1.1\r\nHost: t\r\n".utf8)
        var sockets = [Int32](repeating: -1, count: connections)
        var headSent = [Bool](repeating: false, count: connections)
        while !state.withLock({ $0.stopping }) {
            var open = 0
            var closed = 0
            for index in 0..<connections {
                if sockets[index] >= 0, LoopbackSocket.isClosed(sockets[index]) {
                    close(sockets[index])
                    sockets[index] = -1
                    closed += 1
                }
                if sockets[index] < 0 {
                    let source = LoopbackSocket.attackerAddress(index, perAddress: perAddress)
                    sockets[index] = LoopbackSocket.open(port: port, from: source) ?? -1
                    headSent[index] = false
                }
                guard sockets[index] >= 0 else { continue }
                open += 1
                if !headSent[index] {
                    headSent[index] = LoopbackSocket.send(sockets[index], head)
                } else {
                    _ = LoopbackSocket.send(sockets[index], [UInt8(ascii: "a")])  // a header line never ending
                }
            }
            state.withLock {
                $0.counts.open = open
                $0.counts.closedByServer += closed
            }
            Thread.sleep(forTimeInterval: round)
        }
        for socket in sockets where socket >= 0 { close(socket) }
        state.withLock { $0.finished = true }
    }
}

/// Opens `connections` keep-alive connections that each make one request, read its answer and
/// then stay idle, holding their sockets until `close()`.
/// - Note: Not thread-safe; used from one thread at a time.
final class IdleKeepAliveFlood: @unchecked Sendable {
    // @unchecked Sendable is safe: a test hands it between `onThread` calls that run one after
    // another, never concurrently.
    private(set) var sockets: [Int32] = []

    /// Opens the connections and sends their requests; returns how many were answered 200
    /// within `timeout`.
    func open(port: UInt16, connections: Int, perAddress: Int, timeout: TimeInterval) -> Int {
        let request = Array("GET /health HTTP/1.1\r\nHost: t\r\n\r\n".utf8)
        let deadline = Date().addingTimeInterval(timeout)
        var answered = 0
        for index in 0..<connections {
            let source = LoopbackSocket.attackerAddress(index, perAddress: perAddress)
            guard let socket = LoopbackSocket.open(port: port, from: source) else { continue }
            sockets.append(socket)
            // One at a time, like many separate clients arriving: connect, ask, read the answer.
            guard LoopbackSocket.wait(socket, for: Int32(POLLOUT), timeout: 2),
                LoopbackSocket.send(socket, request)
            else { continue }
            let perRequest = min(deadline, Date().addingTimeInterval(2))
            if LoopbackSocket.readResponse(socket, until: perRequest)?.status == 200 { answered += 1 }
        }
        return answered
    }

    func close() {
        for socket in sockets { Glibc.close(socket) }
        sockets = []
    }
}
