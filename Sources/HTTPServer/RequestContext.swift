/// A key for a typed value that middleware attaches to a `RequestContext` (e.g. the
/// authenticated app). Declare as `enum AuthenticatedAppKey: RequestContextKey { typealias Value = App }`.
/// - Note: Keys are types, never instantiated; values must be `Sendable`.
public protocol RequestContextKey {
    associatedtype Value: Sendable
}

/// What the router knows about one request beyond the request itself: its id, the matched
/// route pattern, the decoded path parameters, and values added by middleware.
///
/// Path parameters are already percent-decoded and validated: never empty, never containing
/// `/`, `..`, NUL or control characters.
/// - Note: Value type; `Sendable`. Each middleware passes its (possibly changed) copy to `next`.
public struct RequestContext: Sendable {
    public let requestID: String
    /// The matched route pattern (`/v1/customers/{id}`), or `nil` when no route matched.
    public internal(set) var route: String?
    /// Decoded path parameters by name.
    public internal(set) var parameters: [String: String]
    private var values: [ObjectIdentifier: any Sendable] = [:]

    public init(requestID: String, route: String? = nil, parameters: [String: String] = [:]) {
        self.requestID = requestID
        self.route = route
        self.parameters = parameters
    }

    /// The named path parameter; throws `400 bad_request` if the route has no such parameter
    /// (a programming error surfaced safely).
    public func parameter(_ name: String) throws(HTTPError) -> String {
        guard let value = parameters[name] else {
            throw HTTPError.badRequest("Missing path parameter \(name).")
        }
        return value
    }

    /// A value attached by middleware.
    public subscript<Key: RequestContextKey>(key: Key.Type) -> Key.Value? {
        get { values[ObjectIdentifier(key)] as? Key.Value }
        set { values[ObjectIdentifier(key)] = newValue }
    }
}
