import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A started `MHD_Daemon`.
// @unchecked Sendable is safe: the pointer is only passed to libmicrohttpd calls documented as
// callable from any thread (MHD_get_daemon_info, MHD_quiesce_daemon), and to MHD_stop_daemon
// exactly once, guarded by HTTPServer's lifecycle state.
struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// A suspended `MHD_Connection`, handed to the task that produces its response.
// @unchecked Sendable is safe: the task only calls MHD_resume_connection (documented as safe
// from any thread) on it, exactly once, and only while the connection is suspended; a
// suspended connection is never timed out or closed, and the daemon is stopped only after every
// suspended connection has been resumed (DaemonCore.shutdown), so the pointer is valid then.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// Per-request state behind libmicrohttpd's `con_cls`: created in the URI log callback (the
/// first thing MHD calls for a request), released in the request-completed callback.
// @unchecked Sendable is safe: the `var` fields are only touched by the libmicrohttpd worker
// thread that owns the connection (MHD calls the URI log, access and completion callbacks of one
// connection from that one thread, one at a time). `handoff` is set by that thread before the
// connection is suspended and the handler task is created (and before the state is registered
// as suspended, under the registry lock), and never changed after; everything shared with the
// task lives inside it, behind its lock.
final class RequestState: @unchecked Sendable {
    enum Phase {
        /// Suspended; the handler task is running.
        case handling
        /// The response is ready (handler finished, or shutdown answered 503); resume pending.
        case responded(HTTPResponse)
        /// The response was queued to libmicrohttpd.
        case finished
    }

    struct Handoff {
        var phase: Phase = .handling
        let connection: ConnectionHandle
        /// MHD_resume_connection has returned.
        var resumeReturned = false
        /// The stored response has been queued.
        var queued = false
        /// libmicrohttpd ended the request without queueing it (the client went away).
        var ended = false
    }

    let rawTarget: String
    /// Where libmicrohttpd's copy of the target starts in its read buffer (an address, never
    /// dereferenced) and its length up to the first NUL: with the address of the HTTP version
    /// that follows the target, they tell whether a NUL cut the C string short.
    let targetAddress: UInt
    let targetVisibleLength: Int
    /// The connection's id in `ConnectionSupervisor` (0 when unknown).
    let connectionID: UInt64
    /// When the request began, kept only when the core's access log needs it.
    let started: ContinuousClock.Instant?
    var headersSeen = false
    /// The request's header fields, read once the head is complete.
    var headers: HTTPHeaders?
    /// The body is being counted for the minimum body rate.
    var readingBody = false
    /// The response said `Connection: close`: libmicrohttpd closes the connection after it.
    var closesAfterResponse = false
    var body = Data()
    /// The body is over the limit: further bytes are counted and discarded, then 413.
    var bodyRejected = false
    var discardedBytes = 0
    var requestID: String?
    var method = ""
    /// A response was queued on this thread without suspending (immediate path, 413, 503).
    var answered = false
    /// Created when the connection is suspended for a handler task; `nil` on the immediate path,
    /// which needs no lock.
    var handoff: Locked<Handoff>?

    init(
        rawTarget: String, targetAddress: UInt = 0, targetVisibleLength: Int? = nil, connectionID: UInt64,
        timed: Bool
    ) {
        self.rawTarget = rawTarget
        self.targetAddress = targetAddress
        self.targetVisibleLength = targetVisibleLength ?? rawTarget.utf8.count
        self.connectionID = connectionID
        self.started = timed ? ContinuousClock.now : nil
    }
}

/// The part of the server libmicrohttpd calls back into: configuration, handler and the
/// bookkeeping of live and suspended requests. Passed to every callback as `cls`.
// @unchecked Sendable is safe: `configuration` and `handler` are immutable `Sendable` values;
// all mutable state is inside `registry`, a `Locked`.
final class DaemonCore: @unchecked Sendable {
    enum Handler: Sendable {
        case async(@Sendable (HTTPRequest) async -> HTTPResponse)
        case synchronous(@Sendable (HTTPRequest) -> HTTPResponse)
        /// Immediate path on the worker thread when the responder can take it, else a task.
        case responder(Responder)
    }

    struct Registry {
        /// Requests between the URI log callback and the completed callback.
        var live = 0
        /// Requests whose connection is suspended or whose resume call has not returned.
        var suspended: [ObjectIdentifier: RequestState] = [:]
        /// stop() has begun: responses carry `Connection: close`.
        var draining = false
        /// The grace period is over: no connection may be suspended any more, because
        /// MHD_stop_daemon is about to run.
        var closing = false
    }

    let configuration: HTTPServer.Configuration
    let handler: Handler
    let registry = Locked(Registry())
    /// Every open connection: head deadline, minimum body rate, eviction near the limit.
    let connections: ConnectionSupervisor

    init(configuration: HTTPServer.Configuration, handler: Handler) {
        self.configuration = configuration
        self.handler = handler
        self.connections = ConnectionSupervisor(
            policy: ConnectionTable.Policy(
                headTimeout: configuration.requestHeadTimeout, minimumBodyRate: configuration.minimumBodyRate,
                evictionThreshold: max(1, configuration.connectionLimit - configuration.evictionHeadroom),
                maxConnectionsPerAddress: configuration.maxConnectionsPerAddress))
    }

    var liveRequestCount: Int { registry.withLock { $0.live } }
    var suspendedCount: Int { registry.withLock { $0.suspended.count } }
    var isDraining: Bool { registry.withLock { $0.draining } }

    /// Most bytes of an over-limit body read and thrown away before answering 413 (beyond it,
    /// the connection is closed): 4 × `maxBodySize`, at least 64 KiB.
    var discardLimit: Int { max(configuration.maxBodySize.multipliedReportingOverflow(by: 4).partialValue, 64 * 1024) }

    // MARK: Start and stop

    func startDaemon() throws(HTTPServerError) -> DaemonHandle {
        let configuration = self.configuration
        // poll(2), not epoll, on Linux too: with epoll and a thread pool, MHD_quiesce_daemon
        // marks each worker quiesced before it takes the listen socket out of that worker's epoll
        // set, a worker woken in between takes it out itself, and the quiesce's own removal then
        // fails and libmicrohttpd aborts the process ("Failed to remove listen FD from epoll
        // set", seen in CI on 0.9.75). Connections per worker are bounded by connectionLimit.
        var flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_ITC.rawValue | MHD_USE_POLL.rawValue

        var address = try SocketAddress(host: configuration.host, port: configuration.port)
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }

        let retainedSelf = Unmanaged.passRetained(self).toOpaque()
        let timeoutSeconds: UInt32 =
            configuration.connectionTimeout.map { duration in
                let (seconds, attoseconds) = duration.components
                let rounded = seconds + (attoseconds > 0 ? 1 : 0)
                return UInt32(clamping: max(1, rounded))
            } ?? 0

        let daemon: OpaquePointer? = address.withSockaddr { sockaddr in
            var options: [MHD_OptionItem] = [
                CMicroHTTPD_option_sock_addr(sockaddr),
                CMicroHTTPD_option_uint(
                    .CONNECTION_LIMIT, UInt32(clamping: configuration.connectionLimit)),
                CMicroHTTPD_option_size(
                    .CONNECTION_MEMORY_LIMIT, configuration.maxHeaderSize + 4 * 1024),
                CMicroHTTPD_option_uint(.CONNECTION_TIMEOUT, timeoutSeconds),
                // No PER_IP_CONNECTION_LIMIT: ConnectionTable keeps that limit, so that refusals
                // are counted (libmicrohttpd's own limit closes silently).
                // Strict parsing: HTTP/1.1 without Host, whitespace in field names, … get 400.
                CMicroHTTPD_option_uint(.STRICT_FOR_CLIENT, 1),
                CMicroHTTPD_option_uri_log(
                    { cls, uri, connection in MicroHTTPDCallbacks.uriLog(cls, uri, connection) }, retainedSelf),
                CMicroHTTPD_option_notify_completed(
                    { cls, connection, conCls, termination in
                        MicroHTTPDCallbacks.completed(cls, connection, conCls, termination)
                    }, retainedSelf),
                CMicroHTTPD_option_notify_connection(
                    { cls, connection, socketContext, code in
                        MicroHTTPDCallbacks.connectionChanged(cls, connection, socketContext, code)
                    }, retainedSelf),
            ]
            if configuration.threadPoolSize > 1 {
                options.append(
                    CMicroHTTPD_option_uint(
                        .THREAD_POOL_SIZE, UInt32(clamping: configuration.threadPoolSize)))
            }
            options.append(CMicroHTTPD_option_end())
            return options.withUnsafeBufferPointer { buffer in
                CMicroHTTPD_start_daemon(
                    flags, 0,
                    { cls, connection, url, method, version, uploadData, uploadDataSize, conCls in
                        MicroHTTPDCallbacks.access(
                            cls, connection, url, method, version, uploadData, uploadDataSize, conCls)
                    },
                    retainedSelf, buffer.baseAddress)
            }
        }
        guard let daemon else {
            Unmanaged<DaemonCore>.fromOpaque(retainedSelf).release()
            throw HTTPServerError(
                code: "bind.failed",
                message: "could not start listening on \(configuration.host):\(configuration.port)")
        }
        connections.start()
        return DaemonHandle(pointer: daemon)
    }

    /// Blocking: quiesce, wait for in-flight requests (bounded), answer leftover suspended
    /// requests with 503, wait for them to be resumed, stop the daemon, close the listen socket,
    /// release the `cls` reference. Called exactly once per daemon.
    func shutdown(daemon: DaemonHandle, gracePeriod: Duration) {
        registry.withLock { $0.draining = true }
        let listenSocket = MHD_quiesce_daemon(daemon.pointer)

        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: gracePeriod)
        while liveRequestCount > 0, clock.now < deadline {
            usleep(2_000)
        }

        // Handlers still running past the grace period: answer for them, so that no
        // connection is left suspended (MHD_stop_daemon must not see one).
        // Setting `closing` and taking the snapshot under one lock: a request registered
        // before is in the snapshot, one arriving after is refused suspension (and answered
        // 503 on its worker thread).
        let leftover = registry.withLock { registry in
            registry.closing = true
            return Array(registry.suspended.values)
        }
        let unavailable = HTTPError.serviceUnavailable(
            "The server is shutting down.", code: "shutting_down")
        for state in leftover {
            let response = unavailable.response(requestID: state.requestID)
            if deliver(response, to: state) {
                logCoreResponse(state: state, status: response.status)
            }
        }
        let resumeDeadline = clock.now.advanced(by: .seconds(5))
        while suspendedCount > 0, clock.now < resumeDeadline {
            usleep(1_000)
        }

        connections.stop()
        MHD_stop_daemon(daemon.pointer)
        if listenSocket >= 0 { close(listenSocket) }  // quiesce handed it to us
        Unmanaged.passUnretained(self).release()  // the reference given to the daemon as cls
    }

    // MARK: Handing responses across threads

    /// Stores `response` for a suspended request and resumes its connection. Returns false
    /// (and does nothing) if the request already has a response: exactly one party resumes.
    @discardableResult
    func deliver(_ response: HTTPResponse, to state: RequestState) -> Bool {
        guard let handoff = state.handoff else { return false }
        let connection: ConnectionHandle? = handoff.withLock { handoff in
            guard case .handling = handoff.phase else { return nil }
            handoff.phase = .responded(response)
            return handoff.connection
        }
        guard let connection else { return false }
        MHD_resume_connection(connection.pointer)
        let done = handoff.withLock { handoff in
            handoff.resumeReturned = true
            return handoff.queued || handoff.ended
        }
        if done { unregisterSuspended(state) }
        return true
    }

    /// Suspends the connection of a complete request and records it, unless shutdown is
    /// already closing connections (then returns false and leaves it alone). Runs on the
    /// connection's worker thread, inside the access handler.
    ///
    /// Holding `registry`'s lock across MHD_suspend_connection makes "recorded" and
    /// "suspended" one step as seen by `shutdown`, which sets `closing` and snapshots under
    /// the same lock: everything it snapshots is really suspended (so resuming it is valid),
    /// and nothing can be suspended after it. Lock order is registry → MHD's internal mutex;
    /// no path takes them in another order (no lock of ours is held while calling MHD
    /// elsewhere, and MHD never calls back into us while holding its mutex on another
    /// worker's behalf).
    func suspendUnlessClosing(_ state: RequestState, connection: ConnectionHandle) -> Bool {
        registry.withLock { registry in
            guard !registry.closing else { return false }
            state.handoff = Locked(RequestState.Handoff(connection: connection))
            MHD_suspend_connection(connection.pointer)
            registry.suspended[ObjectIdentifier(state)] = state
            return true
        }
    }

    func unregisterSuspended(_ state: RequestState) {
        _ = registry.withLock { $0.suspended.removeValue(forKey: ObjectIdentifier(state)) }
    }

    func logCoreResponse(state: RequestState, status: HTTPStatus) {
        guard let accessLog = configuration.accessLog else { return }
        accessLog(
            AccessLogEntry(
                method: state.method, route: nil, status: status.code,
                duration: state.started.map { ContinuousClock.now - $0 } ?? .zero,
                requestID: state.requestID ?? "-"))
    }
}

/// The C callbacks. Each one only translates between libmicrohttpd and `DaemonCore` /
/// `RequestState`; they run on libmicrohttpd worker threads.
enum MicroHTTPDCallbacks {
    static func uriLog(
        _ cls: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?
    ) -> UnsafeMutableRawPointer? {
        guard let cls else { return nil }
        let core = Unmanaged<DaemonCore>.fromOpaque(cls).takeUnretainedValue()
        let state = RequestState(
            rawTarget: uri.map { String(cString: $0) } ?? "/", targetAddress: uri.map { UInt(bitPattern: $0) } ?? 0,
            targetVisibleLength: uri.map { strlen($0) }, connectionID: connection.map(connectionID) ?? 0,
            timed: core.configuration.accessLog != nil)
        core.registry.withLock { $0.live += 1 }
        return Unmanaged.passRetained(state).toOpaque()
    }

    /// A TCP connection was accepted or is about to be closed (its socket is still open).
    static func connectionChanged(
        _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
        _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ code: MHD_ConnectionNotificationCode
    ) {
        guard let cls, let connection, let socketContext else { return }
        let core = Unmanaged<DaemonCore>.fromOpaque(cls).takeUnretainedValue()
        switch code {
        case .CONNECTION_NOTIFY_STARTED:
            let id = core.connections.opened(
                socket: CMicroHTTPD_connection_socket(connection),
                address: CMicroHTTPD_connection_client_address(connection).flatMap(SocketAddress.addressBytes))
            // The id itself is the socket context: nothing to allocate or release.
            socketContext.pointee = UnsafeMutableRawPointer(bitPattern: UInt(id))
        case .CONNECTION_NOTIFY_CLOSED:
            let id = UInt64(UInt(bitPattern: socketContext.pointee))
            socketContext.pointee = nil
            if id != 0 { core.connections.closed(id) }
        default:
            break
        }
    }

    /// The `ConnectionSupervisor` id stored as the connection's socket context.
    static func connectionID(_ connection: OpaquePointer) -> UInt64 {
        UInt64(UInt(bitPattern: CMicroHTTPD_connection_socket_context(connection)))
    }

    static func completed(
        _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
        _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ termination: MHD_RequestTerminationCode
    ) {
        guard let cls, let conCls, let opaque = conCls.pointee else { return }
        conCls.pointee = nil
        let core = Unmanaged<DaemonCore>.fromOpaque(cls).takeUnretainedValue()
        let state = Unmanaged<RequestState>.fromOpaque(opaque).takeRetainedValue()
        core.registry.withLock { $0.live -= 1 }
        // A request libmicrohttpd ends without a second access call (the client hung up while
        // its handler ran) never reaches the access handler's unregistering: it happens here,
        // or the record stays (a leak per such client) and a stop waits for it. Only once
        // `deliver`'s MHD_resume_connection has returned, though (else `deliver` does it): the
        // record is what keeps a stop from freeing the daemon under that call.
        if let handoff = state.handoff {
            let done = handoff.withLock { handoff in
                handoff.ended = true
                return handoff.resumeReturned
            }
            if done { core.unregisterSuspended(state) }
        }
        // The connection waits for its next request head (unless libmicrohttpd closes it).
        if termination == .REQUEST_TERMINATED_COMPLETED_OK, !state.closesAfterResponse, state.connectionID != 0 {
            core.connections.responded(state.connectionID)
        }
    }

    static func access(
        _ cls: UnsafeMutableRawPointer?,
        _ connection: OpaquePointer?,
        _ url: UnsafePointer<CChar>?,
        _ method: UnsafePointer<CChar>?,
        _ version: UnsafePointer<CChar>?,
        _ uploadData: UnsafePointer<CChar>?,
        _ uploadDataSize: UnsafeMutablePointer<Int>?,
        _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) -> MHD_Result {
        guard let cls, let connection, let conCls else { return .NO }
        let core = Unmanaged<DaemonCore>.fromOpaque(cls).takeUnretainedValue()

        let state: RequestState
        if let opaque = conCls.pointee {
            state = Unmanaged<RequestState>.fromOpaque(opaque).takeUnretainedValue()
        } else {
            // Not expected (the URI log callback runs first), but stay correct without it.
            state = RequestState(
                rawTarget: url.map { String(cString: $0) } ?? "/", connectionID: connectionID(connection),
                timed: core.configuration.accessLog != nil)
            core.registry.withLock { $0.live += 1 }
            conCls.pointee = Unmanaged.passRetained(state).toOpaque()
        }

        // First call: headers are complete, no body read yet.
        if !state.headersSeen {
            state.headersSeen = true
            state.method = method.map { String(cString: $0) } ?? ""
            let headers = Self.headers(of: connection)
            state.headers = headers
            if let refusal = Self.headRefusal(state: state, headers: headers, version: version, core: core) {
                core.connections.headReceived(state.connectionID, expectingBody: false)
                return Self.refuse(refusal, state: state, connection: connection, core: core)
            }
            let declared = headers["Content-Length"]
            let expectingBody = (declared.map { $0 != "0" } ?? false) || headers.contains("Transfer-Encoding")
            core.connections.headReceived(state.connectionID, expectingBody: expectingBody)
            state.readingBody = expectingBody && core.connections.tracksBodies
            let maxBody = core.configuration.maxBodySize
            if let declared {
                let length = Int(declared) ?? Int.max
                if length > maxBody {
                    let expectsContinue = headers["Expect"].map { $0.lowercased() == "100-continue" } ?? false
                    if expectsContinue || length > core.discardLimit {
                        // Answer before reading any of the body; MHD then closes the connection.
                        return Self.rejectBody(state: state, connection: connection, core: core)
                    }
                    // The client is already sending: discard the body, then answer, so that it
                    // reads the 413 instead of a reset from closing on unread data.
                    state.bodyRejected = true
                    return .YES
                }
                state.body.reserveCapacity(length)
            }
            return .YES
        }

        // Body chunks.
        if let uploadDataSize, uploadDataSize.pointee > 0 {
            let count = uploadDataSize.pointee
            uploadDataSize.pointee = 0
            if state.readingBody { core.connections.bodyReceived(state.connectionID, bytes: count) }
            if !state.bodyRejected, state.body.count + count > core.configuration.maxBodySize {
                // A chunked body outgrew the limit: stop keeping it.
                state.bodyRejected = true
                state.discardedBytes = state.body.count
                state.body = Data()
            }
            if state.bodyRejected {
                state.discardedBytes += count
                // MHD cannot queue a response while upload data is pending; past the discard
                // limit, close the connection instead of reading on.
                return state.discardedBytes > core.discardLimit ? .NO : .YES
            }
            if let uploadData {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
                    state.body.append(bytes, count: count)
                }
            }
            return .YES
        }

        if state.readingBody {
            state.readingBody = false
            core.connections.bodyComplete(state.connectionID)
        }
        if state.bodyRejected {
            return Self.rejectBody(state: state, connection: connection, core: core)
        }

        // The request is complete; on a second call after a resume, its response is stored.
        if let handoff = state.handoff {
            let phase = handoff.withLock { $0.phase }
            guard case .responded(let response) = phase else { return .YES }
            let result = Self.queue(
                response, requestID: state.requestID ?? "-", state: state, on: connection, core: core)
            let done = handoff.withLock { handoff in
                handoff.phase = .finished
                handoff.queued = true
                return handoff.resumeReturned
            }
            if done { core.unregisterSuspended(state) }
            return result
        }
        guard !state.answered else { return .YES }

        let request = Self.makeRequest(state: state, connection: connection, version: version)
        state.requestID = request.requestID
        state.body = Data()
        switch core.handler {
        case .synchronous(let handler):
            state.answered = true
            return Self.queue(handler(request), requestID: request.requestID, state: state, on: connection, core: core)
        case .responder(let responder):
            let resolved = responder.resolve(request)
            if let response = responder.respondImmediately(to: request, resolved: resolved) {
                state.answered = true
                return Self.queue(response, requestID: request.requestID, state: state, on: connection, core: core)
            }
            return Self.suspend(state, request: request, connection: connection, core: core) {
                await responder.respond(to: request, resolved: resolved)
            }
        case .async(let handler):
            return Self.suspend(state, request: request, connection: connection, core: core) {
                await handler(request)
            }
        }
    }

    /// Suspends the connection and runs `produce` in a task that delivers its response; answers
    /// 503 at once instead when shutdown is already closing connections.
    static func suspend(
        _ state: RequestState, request: HTTPRequest, connection: OpaquePointer, core: DaemonCore,
        produce: @escaping @Sendable () async -> HTTPResponse
    ) -> MHD_Result {
        // The task is created after the suspend, so its resume can never precede it; the worker
        // processes a resume only after this callback has returned.
        guard core.suspendUnlessClosing(state, connection: ConnectionHandle(pointer: connection)) else {
            state.answered = true
            let response = HTTPError.serviceUnavailable(
                "The server is shutting down.", code: "shutting_down"
            ).response(requestID: request.requestID)
            core.logCoreResponse(state: state, status: response.status)
            return queue(response, requestID: request.requestID, state: state, on: connection, core: core)
        }
        Task.detached { [core, state] in
            let response = await produce()
            core.deliver(response, to: state)
        }
        return .YES
    }

    // MARK: Helpers

    /// Why a complete request head is refused before its body is read (control character in
    /// the target, ambiguous framing), or nil.
    static func headRefusal(
        state: RequestState, headers: HTTPHeaders, version: UnsafePointer<CChar>?, core: DaemonCore
    ) -> HTTPError? {
        // libmicrohttpd parses the request line in place: the target, a NUL where the space
        // was, then the version. So the version's address tells where the target really ended,
        // past any NUL inside it. An address outside the connection's buffer (no version) means
        // unknown, and only the visible bytes are checked.
        var delimitedLength: Int?
        if let version, state.targetAddress != 0 {
            let distance = Int(bitPattern: UInt(bitPattern: version) &- state.targetAddress &- 1)
            let bufferLimit = core.configuration.maxHeaderSize + 4 * 1024
            if distance >= state.targetVisibleLength, distance <= bufferLimit { delimitedLength = distance }
        }
        if let refusal = RequestTargetPolicy.refusal(
            visible: state.rawTarget.utf8, visibleLength: state.targetVisibleLength, delimitedLength: delimitedLength)
        {
            return refusal
        }
        return MessageFramingPolicy.refusal(
            headers: headers, isHTTP10: version.map { strcmp($0, "HTTP/1.0") == 0 } ?? false)
    }

    /// Answers a refused request head and closes the connection: what follows the head on it
    /// (a body of unknown length, a smuggled request) is never read as a request.
    static func refuse(
        _ error: HTTPError, state: RequestState, connection: OpaquePointer, core: DaemonCore
    ) -> MHD_Result {
        let requestID = RequestID.resolve(from: state.headers ?? headers(of: connection))
        state.requestID = requestID
        let response = error.response(requestID: requestID)
        core.logCoreResponse(state: state, status: response.status)
        state.answered = true
        return queue(response, requestID: requestID, state: state, on: connection, core: core, closing: true)
    }

    /// Queues 413 for a request whose body is over the limit.
    static func rejectBody(state: RequestState, connection: OpaquePointer, core: DaemonCore) -> MHD_Result {
        if state.readingBody {
            state.readingBody = false
            core.connections.bodyComplete(state.connectionID)
        }
        let requestID = RequestID.resolve(from: state.headers ?? headers(of: connection))
        state.requestID = requestID
        let response = HTTPError.contentTooLarge(limit: core.configuration.maxBodySize)
            .response(requestID: requestID)
        core.logCoreResponse(state: state, status: response.status)
        state.answered = true
        return queue(response, requestID: requestID, state: state, on: connection, core: core)
    }

    static func makeRequest(
        state: RequestState, connection: OpaquePointer, version: UnsafePointer<CChar>?
    ) -> HTTPRequest {
        HTTPRequest(
            method: HTTPMethod(state.method),
            target: state.rawTarget,
            headers: state.headers ?? headers(of: connection),
            body: state.body,
            remoteAddress: CMicroHTTPD_connection_client_address(connection).flatMap(SocketAddress.describe),
            requestID: nil,
            version: version.map { strcmp($0, "HTTP/1.1") == 0 ? "HTTP/1.1" : String(cString: $0) } ?? "HTTP/1.1")
    }

    static func headers(of connection: OpaquePointer) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(Int(MHD_get_connection_values(connection, .HEADER_KIND, nil, nil)))
        withUnsafeMutablePointer(to: &headers) { pointer in
            _ = MHD_get_connection_values(
                connection, .HEADER_KIND,
                { cls, _, key, value in
                    guard let cls, let key else { return .YES }
                    let headers = cls.assumingMemoryBound(to: HTTPHeaders.self)
                    headers.pointee.add(
                        name: String(cString: key), value: value.map { String(cString: $0) } ?? "")
                    return .YES
                }, pointer)
        }
        return headers
    }

    /// Header fields the server computes itself; a handler's values for them are dropped.
    private static let managedHeaders = ["Content-Length", "Transfer-Encoding"]

    /// Queues `response`; with `closing` (or while draining) it says `Connection: close`, and
    /// libmicrohttpd closes the connection once it is sent.
    static func queue(
        _ response: HTTPResponse, requestID: String, state: RequestState, on connection: OpaquePointer,
        core: DaemonCore, closing: Bool = false
    ) -> MHD_Result {
        let mhdResponse: OpaquePointer? = response.body.withUnsafeBytes { buffer in
            MHD_create_response_from_buffer(
                buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return .NO }
        defer { MHD_destroy_response(mhdResponse) }
        var sawRequestID = false
        for field in response.headers
        where !managedHeaders.contains(where: { HTTPHeaders.same($0, field.name) }) {
            if HTTPHeaders.same(field.name, RequestID.headerName) { sawRequestID = true }
            // MHD refuses fields containing CR, LF or NUL; such a field is dropped.
            _ = MHD_add_response_header(mhdResponse, field.name, field.value)
        }
        if !sawRequestID {
            _ = MHD_add_response_header(mhdResponse, RequestID.headerName, requestID)
        }
        // Near the connection limit, a client is told not to reuse its connection rather than
        // have it evicted under a request it is about to send.
        if closing || core.isDraining || core.connections.isCrowded {
            _ = MHD_add_response_header(mhdResponse, "Connection", "close")
            state.closesAfterResponse = true
        }
        let status = (100...999).contains(response.status.code) ? response.status.code : 500
        return MHD_queue_response(connection, UInt32(status), mhdResponse)
    }
}

/// An IPv4 or IPv6 socket address built from a literal host.
struct SocketAddress {
    private var storage = sockaddr_storage()
    private(set) var isIPv6 = false
    private var length: Int

    init(host: String, port: UInt16) throws(HTTPServerError) {
        let literal = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { raw in
                withUnsafeBytes(of: v4) { raw.copyMemory(from: $0) }
            }
            length = MemoryLayout<sockaddr_in>.size
        } else if inet_pton(AF_INET6, literal, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { raw in
                withUnsafeBytes(of: v6) { raw.copyMemory(from: $0) }
            }
            length = MemoryLayout<sockaddr_in6>.size
            isIPv6 = true
        } else {
            throw HTTPServerError(
                code: "config.invalidHost", message: "host must be an IPv4 or IPv6 literal or localhost")
        }
    }

    mutating func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>) -> Result) -> Result {
        withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
        }
    }

    /// The IP address of a peer (4 or 16 bytes, network order, no port), or nil for other
    /// families: the key of the per-address connection limit.
    static func addressBytes(_ address: UnsafePointer<sockaddr>) -> [UInt8]? {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return UnsafeRawPointer(address).withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                var raw = $0.pointee.sin_addr
                return withUnsafeBytes(of: &raw) { Array($0) }
            }
        case AF_INET6:
            return UnsafeRawPointer(address).withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                var raw = $0.pointee.sin6_addr
                return withUnsafeBytes(of: &raw) { Array($0) }
            }
        default:
            return nil
        }
    }

    /// `host:port` (`[v6]:port`) for a peer address, or nil for other families.
    static func describe(_ address: UnsafePointer<sockaddr>) -> String? {
        let family = Int32(address.pointee.sa_family)
        switch family {
        case AF_INET:
            // Formatted here rather than by getnameinfo: this runs for every request.
            let (ip, port) = UnsafeRawPointer(address).withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                (UInt32(bigEndian: $0.pointee.sin_addr.s_addr), UInt16(bigEndian: $0.pointee.sin_port))
            }
            // "255.255.255.255:65535" is 21 bytes.
            return String(unsafeUninitializedCapacity: 21) { buffer in
                var index = 0
                func decimal(_ value: Int) {
                    var divisor = 1
                    while divisor * 10 <= value { divisor *= 10 }
                    while divisor > 0 {
                        buffer[index] = UInt8(ascii: "0") + UInt8(value / divisor % 10)
                        index += 1
                        divisor /= 10
                    }
                }
                for shift in stride(from: 24, through: 0, by: -8) {
                    decimal(Int(ip >> UInt32(shift) & 0xFF))
                    buffer[index] = UInt8(ascii: shift == 0 ? ":" : ".")
                    index += 1
                }
                decimal(Int(port))
                return index
            }
        case AF_INET6: break
        default: return nil
        }
        let length = MemoryLayout<sockaddr_in6>.size
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let status = getnameinfo(
            address, socklen_t(length), &host, socklen_t(host.count), &service, socklen_t(service.count),
            NI_NUMERICHOST | NI_NUMERICSERV)
        guard status == 0 else { return nil }
        let hostText = decodeCString(host)
        let portText = decodeCString(service)
        return family == AF_INET6 ? "[\(hostText)]:\(portText)" : "\(hostText):\(portText)"
    }

    private static func decodeCString(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
