/// Code around every request the router answers: authentication, limits, metrics, headers.
///
/// `handle` receives the request, its context (route and parameters already resolved; `route`
/// is `nil` for a request that will be answered 404/405/400), and `next`, the rest of the
/// chain. Return a response without calling `next` to short-circuit; throw `HTTPError` to
/// answer with the JSON error shape. Middleware runs in the order added: the first added is
/// outermost.
/// - Note: Must be `Sendable`; one instance serves all requests concurrently.
public protocol Middleware: Sendable {
    /// The rest of the chain: further middleware, then the route handler.
    typealias Next = @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse

    func handle(_ request: HTTPRequest, context: RequestContext, next: Next) async throws -> HTTPResponse
}

/// A middleware from a closure.
/// - Note: `Sendable`; the closure must be too.
public struct MiddlewareFunction: Middleware {
    private let body: @Sendable (HTTPRequest, RequestContext, Next) async throws -> HTTPResponse

    public init(_ body: @escaping @Sendable (HTTPRequest, RequestContext, Next) async throws -> HTTPResponse) {
        self.body = body
    }

    public func handle(_ request: HTTPRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        try await body(request, context, next)
    }
}
