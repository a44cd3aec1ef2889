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

/// Middleware that can also run on the immediate path: on the libmicrohttpd thread that received
/// the request, around an immediate route (`Router.addImmediate`), without a task.
///
/// A responder runs immediate routes on the server's threads only if *every* middleware it has
/// conforms to this protocol (`Responder.answersImmediately`); otherwise immediate routes are
/// still served, through `handle` on the task pool like async routes. For each request on the
/// immediate path the responder calls `handleImmediately`, never `handle`. It must do what
/// `handle` does, but without waiting: no blocking I/O, no locks held long, no Swift concurrency.
///
/// Returning `nil` *defers* the request: the responder then starts over with the async chain
/// (`handle` of every middleware, then the handler, on the task pool), as if the route were
/// async. Defer when the work needs to wait (e.g. an API key that must be looked up in the
/// store). `next` returns `nil` when something further in defers; return that `nil` as is.
/// A request that is deferred has therefore been seen by the outer `handleImmediately` calls
/// and will be seen again by their `handle`: they must not have done anything observable before
/// learning that it is deferred (record metrics only once `next` returned a response).
/// - Note: Must be `Sendable`; one instance serves all requests concurrently, from any thread.
public protocol ImmediateMiddleware: Middleware {
    /// The rest of the immediate chain: further middleware, then the immediate handler; `nil`
    /// when the request was deferred to the async path.
    typealias ImmediateNext = (HTTPRequest, RequestContext) throws -> HTTPResponse?

    func handleImmediately(_ request: HTTPRequest, context: RequestContext, next: ImmediateNext) throws
        -> HTTPResponse?
}
