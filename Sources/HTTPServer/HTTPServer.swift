import CMicroHTTPD
import Foundation

/// An HTTP/1.1 server on GNU libmicrohttpd that hands each complete request to one handler.
///
/// What it promises:
/// - **Listening when constructed.** `init` binds and starts serving (port 0 picks an ephemeral
///   port; read it from `port`), or throws `HTTPServerError`.
/// - **Limits.** A body larger than `maxBodySize` is never buffered and is answered 413
///   `content_too_large`: at once, without reading any of it, when the client sent
///   `Expect: 100-continue` or declared more than 4 × the limit (libmicrohttpd then closes the
///   connection); otherwise after reading and discarding it (up to 4 × the limit), because a
///   client that is already sending would otherwise see a connection reset instead of the 413.
///   A body past the discard allowance gets the connection closed. Request line plus
///   headers that do not fit `maxHeaderSize` are answered by libmicrohttpd with 431 (or 414 for
///   a long URI); a malformed request (bad request line, HTTP/1.1 without `Host`, a header
///   line without a colon) gets 400 from libmicrohttpd's strict parser
///   (`MHD_OPTION_STRICT_FOR_CLIENT`), except that a request line without any space is
///   dropped without a response; none of this disturbs other connections. These answers
///   come from libmicrohttpd itself, so their bodies are its short HTML, not our JSON.
///   A request target with a control character (NUL included) gets 400
///   `invalid_request_target`, and ambiguous body framing (`Content-Length` with
///   `Transfer-Encoding`, …; see `MessageFramingPolicy`) 400 `invalid_framing` or 501; after
///   those the connection is closed, so nothing pipelined behind them is served.
/// - **Connections.** At most `connectionLimit` are open; near it, new clients get in by
///   closing the oldest idle keep-alive connections (then the oldest still sending a first
///   request head); beyond it they wait in the listen backlog. One address holds at most
///   `maxConnectionsPerAddress`. A request head must be complete within `requestHeadTimeout`,
///   a body arrive at `minimumBodyRate`, and a connection idle for `connectionTimeout` is
///   closed.
/// - **Async handlers never block libmicrohttpd.** See "Bridging" below.
/// - **Every response carries `X-Request-Id`**: the request's `requestID`.
/// - **Graceful stop.** `stop()` stops accepting, lets in-flight requests finish for up to the
///   grace period, answers any still-running async handler with 503 `shutting_down`, then
///   closes every connection. Responses sent while draining carry `Connection: close`.
///
/// Bridging async handlers (the design choice): the request is handed to a detached Swift
/// `Task` and the libmicrohttpd connection is *suspended* (`MHD_suspend_connection`, daemon
/// started with `MHD_ALLOW_SUSPEND_RESUME`). The worker thread returns to its event loop at
/// once and keeps serving other connections. When the task has the response it stores it in the
/// request's state and calls `MHD_resume_connection` (documented safe from any thread); the
/// worker then calls the access handler again, which queues the stored response. Nothing waits
/// on a semaphore, so no libmicrohttpd thread and no cooperative-pool thread is ever blocked
/// by the other. A suspended connection cannot be closed (it does not time out, and
/// `MHD_stop_daemon` is only called once every suspended connection has been resumed), so
/// the connection pointer the task holds stays valid until its single resume.
///
/// Immediate answers skip all of that: a responder's immediate route (`Router.addImmediate`, with
/// every middleware an `ImmediateMiddleware`) and a synchronous handler
/// (`HTTPServer.synchronous(configuration:handler:)`) run directly on the worker thread that
/// received the request, and the response is queued before the access callback returns: no
/// suspend, no resume, no task, no lock of the hand-off. Right for work that never waits; wrong
/// for anything that blocks, which stalls every connection of that worker.
///
/// - Note: Thread-safe: `port`, `baseURL` and `stop()` may be used from any thread or task.
public final class HTTPServer: Sendable {
    /// Listening address and limits.
    /// - Note: Immutable value once passed to the server; `Sendable`.
    public struct Configuration: Sendable {
        /// An IPv4 or IPv6 literal, or `localhost` (127.0.0.1).
        public var host: String
        /// 0 picks an ephemeral port.
        public var port: UInt16
        /// libmicrohttpd worker threads (`MHD_OPTION_THREAD_POOL_SIZE`); 1 means a single
        /// polling thread.
        public var threadPoolSize: Int
        /// Largest accepted request body in bytes; larger bodies get 413 and are never buffered
        /// (see "Limits" above for when they are discarded and when refused unread).
        public var maxBodySize: Int
        /// Budget in bytes for the request line plus headers. libmicrohttpd's per-connection
        /// memory pool (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`) is set to this plus 4 KiB of room
        /// for buffering and the response head, so the limit is approximate: a head somewhat
        /// larger than this may still fit, a much larger one gets 431 (414 for a long URI).
        public var maxHeaderSize: Int
        /// Most simultaneously open connections (`MHD_OPTION_CONNECTION_LIMIT`, split across
        /// the worker threads). When the open connections come within `evictionHeadroom` of it,
        /// each newly accepted connection closes the oldest connection waiting for a request:
        /// kept-alive idle ones first, then ones still sending their first request head. Busy
        /// connections (handler running, response being sent) are never closed for this; when
        /// nothing can be closed and the limit is reached, libmicrohttpd stops accepting and
        /// further connections wait in the kernel's listen backlog until a slot frees. Starting
        /// the server raises the process's soft open-file limit to fit this plus a reserve
        /// (`FileDescriptorBudget`), or throws `config.fileDescriptors` when the hard limit is
        /// too low.
        public var connectionLimit: Int
        /// A connection with no I/O for this long is closed (`MHD_OPTION_CONNECTION_TIMEOUT`,
        /// whole seconds, rounded up; `nil` means never). Time spent in the handler does not count.
        /// Each byte received restarts it: `requestHeadTimeout` and `minimumBodyRate` bound
        /// clients that trickle.
        public var connectionTimeout: Duration?
        /// A connection must deliver a complete request head (request line and headers) within
        /// this time of being accepted, or of its previous response when kept alive (so it also
        /// bounds how long an idle keep-alive connection is kept); otherwise it is closed without
        /// an answer. Bytes trickling in do not extend it. `nil`: no deadline. Enforced by a sweep
        /// every eighth of the shortest deadline (50–500 ms).
        public var requestHeadTimeout: Duration?
        /// The slowest a request body may arrive; below it the connection is closed. `nil`: no
        /// minimum (only `connectionTimeout` applies).
        public var minimumBodyRate: MinimumBodyRate?
        /// Most connections open at once from one client IP address (whole IPv6 addresses); a
        /// connection beyond it is closed as soon as it is accepted, and counted
        /// (`ConnectionStatistics.addressRefusals`). 0: no limit. Behind a reverse proxy every client
        /// shares the proxy's address: set it above the proxy's connection pool, or 0.
        public var maxConnectionsPerAddress: Int
        /// How long `stop()` waits for in-flight requests by default.
        public var shutdownGracePeriod: Duration
        /// Receives an entry for the responses the core makes itself (413, and 503 at
        /// shutdown); the router logs everything it answers.
        public var accessLog: AccessLogger?

        public init(
            host: String = "127.0.0.1",
            port: UInt16 = 0,
            threadPoolSize: Int = max(2, ProcessInfo.processInfo.activeProcessorCount),
            maxBodySize: Int = 1 << 20,
            maxHeaderSize: Int = 16 * 1024,
            connectionLimit: Int = 1000,
            connectionTimeout: Duration? = .seconds(30),
            requestHeadTimeout: Duration? = .seconds(10),
            minimumBodyRate: MinimumBodyRate? = MinimumBodyRate(bytesPerSecond: 1024, grace: .seconds(10)),
            maxConnectionsPerAddress: Int = 256,
            shutdownGracePeriod: Duration = .seconds(10),
            accessLog: AccessLogger? = nil
        ) {
            self.host = host
            self.port = port
            self.threadPoolSize = threadPoolSize
            self.maxBodySize = maxBodySize
            self.maxHeaderSize = maxHeaderSize
            self.connectionLimit = connectionLimit
            self.connectionTimeout = connectionTimeout
            self.requestHeadTimeout = requestHeadTimeout
            self.minimumBodyRate = minimumBodyRate
            self.maxConnectionsPerAddress = maxConnectionsPerAddress
            self.shutdownGracePeriod = shutdownGracePeriod
            self.accessLog = accessLog
        }

        /// How close to `connectionLimit` eviction starts: a sixteenth of it, 1 to 64. Room for
        /// the connections accepted in one burst before the ones they evict are closed.
        public var evictionHeadroom: Int { max(1, min(64, connectionLimit / 16)) }
    }

    /// The slowest accepted request body: after `grace` from the end of the request head, the
    /// body received must keep up an average of `bytesPerSecond` (the rule of Apache's
    /// mod_reqtimeout: the allowance grows by one second per `bytesPerSecond` bytes received).
    /// - Note: Immutable value; `Sendable`.
    public struct MinimumBodyRate: Sendable, Equatable {
        public var bytesPerSecond: Int
        public var grace: Duration

        public init(bytesPerSecond: Int, grace: Duration) {
            self.bytesPerSecond = bytesPerSecond
            self.grace = grace
        }
    }

    /// Connection counters since the server started (see `connectionLimit`,
    /// `requestHeadTimeout`, `minimumBodyRate`).
    /// - Note: Immutable value; `Sendable`.
    public struct ConnectionStatistics: Sendable, Equatable {
        /// Connections open now (including those being closed).
        public var open: Int
        /// Closed to make room for a new connection near `connectionLimit`.
        public var evicted: Int
        /// Closed because their request head was not complete within `requestHeadTimeout`.
        public var headTimeouts: Int
        /// Closed because their body arrived below `minimumBodyRate`.
        public var slowBodies: Int
        /// Closed at accept because their client address already held `maxConnectionsPerAddress`.
        public var addressRefusals: Int

        public init(open: Int, evicted: Int, headTimeouts: Int, slowBodies: Int, addressRefusals: Int = 0) {
            self.open = open
            self.evicted = evicted
            self.headTimeouts = headTimeouts
            self.slowBodies = slowBodies
            self.addressRefusals = addressRefusals
        }
    }

    /// The configuration the server was started with.
    public let configuration: Configuration
    /// The bound TCP port (the ephemeral one when `configuration.port` was 0).
    public let port: UInt16

    private let core: DaemonCore
    private let lifecycle: Locked<Lifecycle>

    private enum Lifecycle {
        case running(DaemonHandle)
        case stopping
        case stopped
    }

    /// Starts a server whose requests are answered by an async handler (see "Bridging").
    public convenience init(
        configuration: Configuration = Configuration(),
        handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse
    ) throws(HTTPServerError) {
        try self.init(configuration: configuration, handler: .async(handler))
    }

    /// Starts a server whose requests are answered by a router's responder: on the worker
    /// thread that received the request when the responder answers it immediately (immediate
    /// routes, see `Router.addImmediate` and `Responder.respondImmediately(to:)`), otherwise by a
    /// task (see "Bridging").
    public convenience init(configuration: Configuration = Configuration(), responder: Responder)
        throws(HTTPServerError)
    {
        try self.init(configuration: configuration, handler: .responder(responder))
    }

    /// Starts a server whose handler runs synchronously on libmicrohttpd's worker thread, with
    /// no task hop: for cheap stubs. It must not block or wait on Swift concurrency: it stalls
    /// every connection of that worker. (A factory rather than an `init`, so that a trailing
    /// closure given to `init` always means the async handler.)
    public static func synchronous(
        configuration: Configuration = Configuration(),
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws(HTTPServerError) -> HTTPServer {
        try HTTPServer(configuration: configuration, handler: .synchronous(handler))
    }

    private init(configuration: Configuration, handler: DaemonCore.Handler) throws(HTTPServerError) {
        guard configuration.maxBodySize >= 0, configuration.maxHeaderSize > 0,
            configuration.connectionLimit > 0, configuration.threadPoolSize > 0,
            configuration.maxConnectionsPerAddress >= 0,
            configuration.requestHeadTimeout.map({ $0 > .zero }) ?? true,
            configuration.minimumBodyRate.map({ $0.bytesPerSecond > 0 && $0.grace >= .zero }) ?? true
        else { throw HTTPServerError(code: "config.invalidLimit", message: "limits must be positive") }
        try FileDescriptorBudget.ensure(connectionLimit: configuration.connectionLimit)
        let core = DaemonCore(configuration: configuration, handler: handler)
        let daemon = try core.startDaemon()
        self.configuration = configuration
        self.core = core
        self.port = CMicroHTTPD_daemon_bind_port(daemon.pointer)
        self.lifecycle = Locked(.running(daemon))
    }

    deinit {
        // A server dropped without stop(): shut down without a grace period rather than leak
        // threads and the socket. Must not be the last reference released on a worker thread.
        let daemon: DaemonHandle? = lifecycle.withLock { state in
            guard case .running(let daemon) = state else { return nil }
            state = .stopped
            return daemon
        }
        if let daemon { core.shutdown(daemon: daemon, gracePeriod: .zero) }
    }

    /// `http://host:port` for clients of this server (`127.0.0.1` / `[::1]` when bound to any).
    public var baseURL: URL {
        var host = configuration.host
        if host == "0.0.0.0" || host == "localhost" { host = "127.0.0.1" }
        if host == "::" { host = "::1" }
        if host.contains(":") { host = "[\(host)]" }
        return URL(string: "http://\(host):\(port)")!
    }

    /// Whether `stop()` has begun.
    public var isStopped: Bool {
        lifecycle.withLock { if case .running = $0 { false } else { true } }
    }

    /// Requests received but not yet completed (for tests and metrics).
    public var inFlightRequestCount: Int { core.liveRequestCount }

    /// Requests whose connection is suspended while their handler runs (a test's view).
    var suspendedRequestCount: Int { core.suspendedCount }

    /// Open connections and why the server closed some (for tests and metrics).
    public var connectionStatistics: ConnectionStatistics { core.connections.statistics }

    /// Stops gracefully: no new connections; in-flight requests get up to `gracePeriod`
    /// (default `configuration.shutdownGracePeriod`) to finish; async handlers still running
    /// after that are answered 503; then every connection is closed and the threads joined.
    /// Returns when the server is fully stopped. Idempotent; concurrent callers all wait.
    public func stop(gracePeriod: Duration? = nil) async {
        let daemon: DaemonHandle? = lifecycle.withLock { state in
            guard case .running(let daemon) = state else { return nil }
            state = .stopping
            return daemon
        }
        guard let daemon else {
            while lifecycle.withLock({ if case .stopping = $0 { true } else { false } }) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            return
        }
        let grace = gracePeriod ?? configuration.shutdownGracePeriod
        let core = self.core
        // The shutdown blocks (polling waits, MHD_stop_daemon joins threads): run it on a
        // thread of its own, not on the cooperative pool.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                core.shutdown(daemon: daemon, gracePeriod: grace)
                continuation.resume()
            }
            thread.name = "HTTPServer.stop"
            thread.start()
        }
        lifecycle.withLock { $0 = .stopped }
    }

    /// Installs SIGTERM/SIGINT handling (`ShutdownSignalHandler`), waits for the first such
    /// signal, then `stop()`s with the configured grace period. For `main`.
    public func runUntilShutdownSignal(_ signals: [Int32] = [SIGTERM, SIGINT]) async {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        let watcher = ShutdownSignalHandler(signals: signals) { signal in
            continuation.yield(signal)
        }
        for await _ in stream { break }
        watcher.cancel()
        await stop()
    }
}

/// Why the server could not start. `code` is stable (`bind.failed`, `config.invalidHost`,
/// `config.invalidLimit`); the message never contains secrets.
/// - Note: Immutable value; `Sendable`.
public struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "HTTPServerError(\(code)): \(message)" }
}
