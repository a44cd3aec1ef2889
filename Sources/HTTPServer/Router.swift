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

    private var routes: [Route] = []
    private var middleware: [any Middleware] = []
    private let accessLog: AccessLogger?

    /// - Parameter accessLog: receives one entry per request the responder answers.
    public init(accessLog: AccessLogger? = nil) {
        self.accessLog = accessLog
    }

    /// Adds a route. Traps on an invalid pattern.
    public mutating func add(_ method: HTTPMethod, _ pattern: String, handler: @escaping Handler) {
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

/// Answers requests with the routes and middleware a `Router` had when it was built.
///
/// Never throws: errors from handlers and middleware become JSON error responses
/// (`HTTPError` as is, anything else 500 `internal_error`). Every response carries
/// `X-Request-Id`. Usable without a server (`respond(to:)`), which is how tests can run
/// in process.
/// - Note: Immutable and `Sendable`; serves any number of requests concurrently.
public struct Responder: Sendable {
    fileprivate let routes: [Route]
    fileprivate let middleware: [any Middleware]
    fileprivate let accessLog: AccessLogger?

    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        let started = ContinuousClock.now
        var context = RequestContext(requestID: request.requestID)
        let terminal: Middleware.Next
        switch match(request) {
        case .found(let route, let parameters):
            context.route = route.pattern
            context.parameters = parameters
            terminal = route.handler
        case .failed(let error):
            terminal = { _, _ in throw error }
        }
        let chain = middleware.reversed().reduce(terminal) { next, middleware in
            { request, context in try await middleware.handle(request, context: context, next: next) }
        }

        var response: HTTPResponse
        do {
            response = try await chain(request, context)
        } catch {
            response = HTTPError.from(error).response()
        }
        if !response.headers.contains(RequestID.headerName) {
            response.headers[RequestID.headerName] = request.requestID
        }
        accessLog?(
            AccessLogEntry(
                method: request.method.rawValue, route: context.route, status: response.status.code,
                duration: ContinuousClock.now - started, requestID: request.requestID))
        return response
    }

    private enum Match {
        case found(Route, [String: String])
        case failed(HTTPError)
    }

    private func match(_ request: HTTPRequest) -> Match {
        guard request.path.hasPrefix("/") else { return .failed(.notFound()) }
        var decoded: [String] = []
        for raw in request.path.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            guard let segment = PercentDecoding.decode(raw) else {
                return .failed(.badRequest("Malformed percent-encoding in the path.", code: "invalid_path"))
            }
            decoded.append(segment)
        }

        var allowed: [HTTPMethod] = []
        var headFallback: Route?
        for route in routes where route.matches(decoded) {
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
private struct Route: Sendable {
    enum Segment: Equatable, Sendable {
        case literal(String)
        case parameter(String)
    }

    let method: HTTPMethod
    let pattern: String
    let segments: [Segment]
    let handler: Router.Handler
    let order: Int
    /// 1 for a literal, 0 for a parameter, per segment: compared lexicographically.
    let specificity: [Int]

    init(method: HTTPMethod, pattern: String, handler: @escaping Router.Handler, order: Int) {
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
    }

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

    static func isSafeParameter(_ value: String) -> Bool {
        !value.contains("/") && !value.contains("..")
            && !value.unicodeScalars.contains {
                $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value)
            }
    }
}
