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
    public var handler: Router.Handler

    public init(
        _ method: HTTPMethod, _ path: String, access: RouteAccess, operationId: String, summary: String, tag: String,
        request: String? = nil, responses: [Int: String?], query: [String] = [], handler: @escaping Router.Handler
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

    /// The key `AuthenticationMiddleware` looks routes up by.
    var accessKey: String { "\(method.rawValue) \(path)" }
}
