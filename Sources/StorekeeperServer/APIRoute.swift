import HTTPServer

/// One route of the REST API: method, path pattern, who may call it, its handler, and what
/// the OpenAPI document says about it. The router and `/openapi.json` are both built from the
/// same list, and a test checks the router answers every documented operation.
/// - Note: Immutable value; `Sendable`.
public struct APIRoute: Sendable {
    public var method: HTTPMethod
    public var path: String
    public var access: RouteAccess
    public var operationId: String
    public var summary: String
    public var tag: String
    /// Component schema of the JSON request body, if any.
    public var requestSchema: String?
    /// Status → component schema of the JSON response (`nil`: no body or not JSON).
    public var responses: [Int: String?]
    /// Query parameters (all optional strings).
    public var query: [String]
    /// Optional request header fields the operation reads (documented as header parameters).
    public var requestHeaders: [String] = []
    /// Status → response header fields always sent with it (documented as required).
    public var responseHeaders: [Int: [String]] = [:]
    /// Async (on the task pool), or immediate: answered on the HTTP thread that received the
    /// request, for reads that wait on nothing but a short local store read.
    public var handler: RouteHandler

    public init(
        _ method: HTTPMethod, _ path: String, access: RouteAccess, operationId: String, summary: String, tag: String,
        request: String? = nil, responses: [Int: String?], query: [String] = [], handler: @escaping Router.Handler
    ) {
        self.init(
            method, path, access: access, operationId: operationId, summary: summary, tag: tag, request: request,
            responses: responses, query: query, route: .async(handler))
    }

    /// A route answered on the HTTP thread (see `Router.addImmediate`).
    public init(
        _ method: HTTPMethod, _ path: String, access: RouteAccess, operationId: String, summary: String, tag: String,
        request: String? = nil, responses: [Int: String?], query: [String] = [],
        immediate handler: @escaping Router.ImmediateHandler
    ) {
        self.init(
            method, path, access: access, operationId: operationId, summary: summary, tag: tag, request: request,
            responses: responses, query: query, route: .immediate(handler))
    }

    private init(
        _ method: HTTPMethod, _ path: String, access: RouteAccess, operationId: String, summary: String, tag: String,
        request: String?, responses: [Int: String?], query: [String], route handler: RouteHandler
    ) {
        self.method = method
        self.path = path
        self.access = access
        self.operationId = operationId
        self.summary = summary
        self.tag = tag
        self.requestSchema = request
        self.responses = responses
        self.query = query
        self.handler = handler
    }

    /// The route of a versioned resource: it reads `If-Match` when `ifMatch`, and answers an
    /// `ETag` (the version) with each of `etagStatuses`.
    func versioned(ifMatch: Bool, etagStatuses: [Int]) -> APIRoute {
        var route = self
        if ifMatch { route.requestHeaders.append("If-Match") }
        for status in etagStatuses { route.responseHeaders[status, default: []].append("ETag") }
        return route
    }

    /// The handler the router runs: a declared query parameter given more than once is 400
    /// `invalid_query` before it runs. Which of the values would count is a guess (it was the
    /// first), and a proxy or client that appends one would silently change the answer.
    var routedHandler: RouteHandler {
        guard !query.isEmpty else { return handler }
        let names = query
        switch handler {
        case .async(let body):
            return .async { request, context in
                try Self.refuseRepeatedQuery(names, in: request)
                return try await body(request, context)
            }
        case .immediate(let body):
            return .immediate { request, context in
                try Self.refuseRepeatedQuery(names, in: request)
                return try body(request, context)
            }
        }
    }

    static func refuseRepeatedQuery(_ names: [String], in request: HTTPRequest) throws(HTTPError) {
        guard request.queryItems.count > 1 else { return }
        for name in names where request.queryValues(name).count > 1 {
            throw HTTPError(status: .badRequest, code: "invalid_query", message: "\(name) is given more than once.")
        }
    }

    /// The key `AuthenticationMiddleware` looks routes up by.
    var accessKey: String { "\(method.rawValue) \(path)" }
}
