/// Collects routes (method + path pattern → handler) and middleware, then builds an immutable
/// `Responder`.
///
/// Patterns are absolute paths whose segments are literals or whole-segment parameters:
/// `/v1/apps/{appID}/customers/{customerID}`. Matching is per segment after percent-decoding;
/// a literal segment beats a parameter at the same position, and among equally specific
/// patterns the first added wins. A path that matches no pattern gets 404 `not_found`; a path
/// that matches only with other methods gets 405 `method_not_allowed` with `Allow`. A `HEAD`
/// request falls back to the `GET` route. A parameter whose decoded value contains `/`, `..`,
/// NUL or a control character, or a path with a malformed escape, gets 400.
/// An invalid pattern (not starting with `/`, a `{` inside a segment, a repeated parameter
/// name) is a programming error and traps when added.
/// - Note: A value type to configure on one task; the `Responder` it builds is immutable and
///   `Sendable`.
public struct Router: Sendable {
    /// A route handler: a plain function of the request and its context.
    public typealias Handler = @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse
    /// A handler that answers without waiting: it runs on the libmicrohttpd thread that received
    /// the request, with no hop to the task pool (see `addImmediate`). It must not block: no
    /// store access, no network, no sleeping, no waiting on a lock held for long.
    public typealias ImmediateHandler = @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse

    private var routes: [Route] = []
    private var middleware: [any Middleware] = []
    private let accessLog: AccessLogger?

    /// - Parameter accessLog: receives one entry per request the responder answers.
    public init(accessLog: AccessLogger? = nil) {
        self.accessLog = accessLog
    }

    /// Adds a route. Traps on an invalid pattern.
    public mutating func add(_ method: HTTPMethod, _ pattern: String, handler: @escaping Handler) {
        add(method, pattern, .async(handler))
    }

    /// Adds an immediate route: its handler runs on the server thread that received the request,
    /// without suspending the connection or creating a task, when every middleware is an
    /// `ImmediateMiddleware` (and none defers the request); otherwise it runs on the task pool
    /// like an async handler. Errors it throws map to responses exactly as for async handlers.
    /// For reads that never wait (health, in-memory state). Traps on an invalid pattern.
    public mutating func addImmediate(_ method: HTTPMethod, _ pattern: String, handler: @escaping ImmediateHandler) {
        add(method, pattern, .immediate(handler))
    }

    /// Adds a route of either kind. Traps on an invalid pattern.
    public mutating func add(_ method: HTTPMethod, _ pattern: String, _ handler: RouteHandler) {
        let route = Route(method: method, pattern: pattern, handler: handler, order: routes.count)
        precondition(
            !routes.contains { $0.method == method && $0.segments == route.segments },
            "duplicate route \(method) \(pattern)")
        routes.append(route)
    }

    public mutating func get(_ pattern: String, handler: @escaping Handler) {
        add(.get, pattern, handler: handler)
    }

    public mutating func post(_ pattern: String, handler: @escaping Handler) {
        add(.post, pattern, handler: handler)
    }

    public mutating func put(_ pattern: String, handler: @escaping Handler) {
        add(.put, pattern, handler: handler)
    }

    public mutating func patch(_ pattern: String, handler: @escaping Handler) {
        add(.patch, pattern, handler: handler)
    }

    public mutating func delete(_ pattern: String, handler: @escaping Handler) {
        add(.delete, pattern, handler: handler)
    }

    /// Appends middleware; the first added runs outermost.
    public mutating func use(_ middleware: some Middleware) {
        self.middleware.append(middleware)
    }

    /// The immutable responder for the routes and middleware added so far.
    public func buildResponder() -> Responder {
        Responder(
            routes: routes.sorted { lhs, rhs in
                lhs.specificity != rhs.specificity
                    ? lhs.specificity.lexicographicallyPrecedes(rhs.specificity, by: >)
                    : lhs.order < rhs.order
            },
            middleware: middleware,
            accessLog: accessLog)
    }
}

/// What a route runs: an async handler (on the task pool) or an immediate one (on the server
/// thread that received the request; see `Router.addImmediate`).
/// - Note: Immutable value; `Sendable`.
public enum RouteHandler: Sendable {
    case async(Router.Handler)
    case immediate(Router.ImmediateHandler)
}

/// Answers requests with the routes and middleware a `Router` had when it was built.
///
/// Never throws: errors from handlers and middleware become JSON error responses
/// (`HTTPError` as is, anything else 500 `internal_error`). Every response carries
/// `X-Request-Id`. Usable without a server (`respond(to:)`), which is how tests can run
/// in process.
///
/// Two paths, with the same answers: `respond(to:)` runs the async chain (`Middleware.handle`,
/// then the handler) and serves every route. `respondImmediately(to:)` runs the immediate chain
/// (`ImmediateMiddleware.handleImmediately`, then the `Router.ImmediateHandler`) on the calling
/// thread and serves immediate routes, and requests that match no route (404, 405, 400), when
/// every middleware is an `ImmediateMiddleware`; it returns `nil` for anything else, which then
/// goes to `respond(to:)`. `HTTPServer` tries the immediate path first on its own thread.
/// - Note: Immutable and `Sendable`; serves any number of requests concurrently.
public struct Responder: Sendable {
    fileprivate let routes: [Route]
    /// All-literal routes by method and path, for an exact lookup before the general match.
    private let literalRoutes: [LiteralKey: Route]
    /// `routes` by their number of segments, each list in the order of `routes`: a path can
    /// only match routes of its own length, and comparing it with every route was 2% of a GET.
    private let routesBySegmentCount: [Int: [Route]]
    fileprivate let middleware: [any Middleware]
    /// The middleware as `ImmediateMiddleware`, or `nil` when one of them is not.
    private let immediateMiddleware: [any ImmediateMiddleware]?
    fileprivate let accessLog: AccessLogger?

    fileprivate init(routes: [Route], middleware: [any Middleware], accessLog: AccessLogger?) {
        let compose = Self.composer(middleware)
        let compiled = routes.map { route in
            var route = route
            route.chain = compose(route.asyncHandler)
            return route
        }
        var literalRoutes: [LiteralKey: Route] = [:]
        for route in compiled where route.isLiteral {
            let key = LiteralKey(method: route.method, path: route.pattern)
            if literalRoutes[key] == nil { literalRoutes[key] = route }
        }
        let immediate = middleware.compactMap { $0 as? any ImmediateMiddleware }
        self.routes = compiled
        self.literalRoutes = literalRoutes
        self.routesBySegmentCount = Dictionary(grouping: compiled, by: \.segments.count)
        self.middleware = middleware
        self.immediateMiddleware = immediate.count == middleware.count ? immediate : nil
        self.accessLog = accessLog
    }

    /// Whether immediate routes can be answered on the calling thread: every middleware is an
    /// `ImmediateMiddleware`. When false, `respondImmediately(to:)` always returns `nil`.
    public var answersImmediately: Bool { immediateMiddleware != nil }

    /// Answers through the async chain; serves every route, immediate ones included.
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        await respond(to: request, resolved: resolve(request))
    }

    /// Answers on the calling thread, without suspending, when the request matches an immediate
    /// route (or no route) and every middleware answers immediately; `nil` when the request must
    /// go through `respond(to:)` instead (nothing observable has happened then, provided
    /// middleware keeps `ImmediateMiddleware`'s contract).
    public func respondImmediately(to request: HTTPRequest) -> HTTPResponse? {
        respondImmediately(to: request, resolved: resolve(request))
    }

    /// A request matched against the routes: its context, and what the chain ends in.
    struct Resolution: Sendable {
        enum Target: Sendable {
            case route(Route)
            case failure(HTTPError)
        }
        var context: RequestContext
        var target: Target
        /// When the responder started on the request, if an access log needs it.
        var started: ContinuousClock.Instant?
    }

    func resolve(_ request: HTTPRequest) -> Resolution {
        let started = accessLog == nil ? nil : ContinuousClock.now
        var context = RequestContext(requestID: request.requestID)
        switch match(request) {
        case .found(let route, let parameters):
            context.route = route.pattern
            context.parameters = parameters
            return Resolution(context: context, target: .route(route), started: started)
        case .failed(let error):
            return Resolution(context: context, target: .failure(error), started: started)
        }
    }

    func respond(to request: HTTPRequest, resolved: Resolution) async -> HTTPResponse {
        let chain: Middleware.Next
        switch resolved.target {
        case .route(let route): chain = route.chain
        case .failure(let error): chain = Self.composer(middleware)({ _, _ in throw error })
        }
        var response: HTTPResponse
        do {
            response = try await chain(request, resolved.context)
        } catch {
            response = HTTPError.from(error).response()
        }
        finish(&response, request, resolved)
        return response
    }

    func respondImmediately(to request: HTTPRequest, resolved: Resolution) -> HTTPResponse? {
        guard let immediateMiddleware else { return nil }
        var response: HTTPResponse
        do {
            let answered: HTTPResponse?
            switch resolved.target {
            case .route(let route):
                guard case .immediate(let handler) = route.handler else { return nil }
                answered = try Self.runImmediately(
                    immediateMiddleware[...], request, resolved.context, terminal: handler)
            case .failure(let error):
                answered = try Self.runImmediately(
                    immediateMiddleware[...], request, resolved.context, terminal: { _, _ in throw error })
            }
            guard let answered else { return nil }
            response = answered
        } catch {
            response = HTTPError.from(error).response()
        }
        finish(&response, request, resolved)
        return response
    }

    /// Request id header and access log, the same on both paths.
    private func finish(_ response: inout HTTPResponse, _ request: HTTPRequest, _ resolved: Resolution) {
        if !response.headers.contains(RequestID.headerName) {
            response.headers.add(name: RequestID.headerName, value: request.requestID)
        }
        if let accessLog {
            accessLog(
                AccessLogEntry(
                    method: request.method.rawValue, route: resolved.context.route, status: response.status.code,
                    duration: resolved.started.map { ContinuousClock.now - $0 } ?? .zero,
                    requestID: request.requestID))
        }
    }

    /// Wraps a terminal handler in the async middleware, the first added outermost.
    private static func composer(_ middleware: [any Middleware]) -> (@escaping Middleware.Next) -> Middleware.Next {
        { terminal in
            middleware.reversed().reduce(terminal) { next, middleware in
                { request, context in try await middleware.handle(request, context: context, next: next) }
            }
        }
    }

    /// Runs the immediate chain from the first of `middleware` down to `terminal`; `nil` when
    /// some middleware deferred the request.
    private static func runImmediately(
        _ middleware: ArraySlice<any ImmediateMiddleware>, _ request: HTTPRequest, _ context: RequestContext,
        terminal: (HTTPRequest, RequestContext) throws -> HTTPResponse
    ) throws -> HTTPResponse? {
        guard let first = middleware.first else { return try terminal(request, context) }
        return try first.handleImmediately(request, context: context) { request, context in
            try runImmediately(middleware.dropFirst(), request, context, terminal: terminal)
        }
    }

    private enum Match {
        case found(Route, [String: String])
        case failed(HTTPError)
    }

    private func match(_ request: HTTPRequest) -> Match {
        // An all-literal route for exactly this method and path wins outright (nothing is more
        // specific, and duplicates are refused). Only for plain ASCII paths without escapes,
        // where the path is its own decoding and segment-wise equality is string equality.
        if !literalRoutes.isEmpty, request.path.utf8.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "%") }),
            let route = literalRoutes[LiteralKey(method: request.method, path: request.path)]
        {
            return .found(route, [:])
        }
        guard request.path.hasPrefix("/") else { return .failed(.notFound()) }
        var decoded: [String] = []
        // Split at each "/" byte (RFC 3986 segments are byte strings); a split by characters ran
        // grapheme breaking over every path, a third of matching a route, and kept a "/" that
        // carries a combining mark inside a segment.
        let segments = request.path.utf8.dropFirst().split(
            separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        for raw in segments {
            guard let segment = PercentDecoding.decode(Substring(raw)) else {
                return .failed(.badRequest("Malformed percent-encoding in the path.", code: "invalid_path"))
            }
            decoded.append(segment)
        }

        var allowed: [HTTPMethod] = []
        var headFallback: Route?
        for route in routesBySegmentCount[decoded.count] ?? [] where route.matches(decoded) {
            if route.method == request.method {
                return route.bind(decoded)
                    .map { .found(route, $0) }
                    ?? .failed(.badRequest("Invalid path parameter.", code: "invalid_path_parameter"))
            }
            if request.method == .head, route.method == .get, headFallback == nil { headFallback = route }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        if let route = headFallback {
            return route.bind(decoded)
                .map { .found(route, $0) }
                ?? .failed(.badRequest("Invalid path parameter.", code: "invalid_path_parameter"))
        }
        guard !allowed.isEmpty else { return .failed(.notFound()) }
        if allowed.contains(.get), !allowed.contains(.head) { allowed.append(.head) }
        return .failed(.methodNotAllowed(allowed: allowed))
    }
}

/// One compiled route.
struct Route: Sendable {
    enum Segment: Equatable, Sendable {
        case literal(String)
        case parameter(String)
    }

    let method: HTTPMethod
    let pattern: String
    let segments: [Segment]
    let handler: RouteHandler
    /// The handler wrapped in the responder's async middleware (set by `Responder`).
    var chain: Middleware.Next
    let order: Int
    /// 1 for a literal, 0 for a parameter, per segment: compared lexicographically.
    let specificity: [Int]

    init(method: HTTPMethod, pattern: String, handler: RouteHandler, order: Int) {
        precondition(pattern.hasPrefix("/"), "route pattern must start with /: \(pattern)")
        var names: Set<String> = []
        segments = pattern.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
            raw in
            if raw.hasPrefix("{") && raw.hasSuffix("}") && raw.count > 2 {
                let name = String(raw.dropFirst().dropLast())
                precondition(
                    name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") },
                    "invalid parameter name in \(pattern)")
                precondition(names.insert(name).inserted, "repeated parameter name in \(pattern)")
                return .parameter(name)
            }
            precondition(!raw.contains("{") && !raw.contains("}"), "parameters must be whole segments: \(pattern)")
            return .literal(String(raw))
        }
        self.method = method
        self.pattern = pattern
        self.handler = handler
        self.order = order
        self.specificity = segments.map { if case .literal = $0 { 1 } else { 0 } }
        self.chain = Self.asyncFunction(handler)
    }

    /// The handler as an async function (an immediate handler is simply called).
    var asyncHandler: Middleware.Next { Self.asyncFunction(handler) }

    private static func asyncFunction(_ handler: RouteHandler) -> Middleware.Next {
        switch handler {
        case .async(let handler): handler
        case .immediate(let handler): { request, context in try handler(request, context) }
        }
    }

    /// Every segment is a literal.
    var isLiteral: Bool { !specificity.contains(0) }

    /// Structural match on decoded segments: literals equal, parameters non-empty.
    func matches(_ path: [String]) -> Bool {
        guard path.count == segments.count else { return false }
        for (segment, value) in zip(segments, path) {
            switch segment {
            case .literal(let literal): if literal != value { return false }
            case .parameter: if value.isEmpty { return false }
            }
        }
        return true
    }

    /// The parameters, or nil if one is unsafe.
    func bind(_ path: [String]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (segment, value) in zip(segments, path) {
            guard case .parameter(let name) = segment else { continue }
            guard Self.isSafeParameter(value) else { return nil }
            parameters[name] = value
        }
        return parameters
    }

    /// A parameter is one whole segment, never `.` or `..` (a path step). Dots inside it are
    /// data: Google Play's renewal order ids read `GPA.1234-5678-9012-34567..0`.
    static func isSafeParameter(_ value: String) -> Bool {
        // ASCII, the usual parameter: its bytes decide what the search does, without
        // Foundation's string search (2% of a GET's server time); anything else is searched.
        var unsafe = false
        for byte in value.utf8 {
            if byte >= 0x80 { return isSafeParameterBySearch(value) }
            if byte == UInt8(ascii: "/") || byte < 0x20 || byte == 0x7F { unsafe = true }
        }
        return !unsafe && value != "." && value != ".."
    }

    /// The rule by string search (for any text; tests hold the ASCII shortcut to it).
    static func isSafeParameterBySearch(_ value: String) -> Bool {
        // `/` by scalar: "/\u{301}" is one character, and a character search would miss it.
        !value.unicodeScalars.contains("/") && value != "." && value != ".."
            && !value.unicodeScalars.contains {
                $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value)
            }
    }
}

/// The key of an all-literal route: method and path.
struct LiteralKey: Hashable, Sendable {
    let method: HTTPMethod
    let path: String
}
