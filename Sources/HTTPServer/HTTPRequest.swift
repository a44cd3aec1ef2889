import Foundation

/// One complete HTTP request as received: request line, headers and the whole body.
///
/// `path` is the request-target's path exactly as sent (still percent-encoded; the router
/// decodes segments itself so that an encoded `/` can never split a segment). `query` is the
/// raw query string; `queryItems` is its form-decoded view, keeping repeated names.
/// `requestID` is the client's valid `X-Request-Id` or a generated one.
/// - Note: Immutable value; `Sendable`.
public struct HTTPRequest: Sendable {
    /// One `name[=value]` pair of the query string, percent- and `+`-decoded.
    /// - Note: Immutable value; `Sendable`.
    public struct QueryItem: Sendable, Equatable {
        public var name: String
        /// `nil` when the item had no `=`.
        public var value: String?

        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    public var method: HTTPMethod
    /// The path of the request-target, percent-encoded as sent, always starting with `/`
    /// (or `*` for `OPTIONS *`).
    public var path: String
    /// The raw query string without the `?`, or `nil` when the target had none.
    public var query: String?
    public var queryItems: [QueryItem]
    public var headers: HTTPHeaders
    public var body: Data
    /// The peer as `host:port` (`[v6]:port` for IPv6), when known.
    public var remoteAddress: String?
    public var requestID: String
    /// The protocol version from the request line, e.g. `HTTP/1.1`.
    public var version: String

    public init(
        method: HTTPMethod,
        path: String,
        query: String? = nil,
        headers: HTTPHeaders = [:],
        body: Data = Data(),
        remoteAddress: String? = nil,
        requestID: String? = nil,
        version: String = "HTTP/1.1"
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.queryItems = query.map(Self.parseQuery) ?? []
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.requestID = requestID ?? RequestID.resolve(from: headers)
        self.version = version
    }

    /// Builds a request from a raw request-target (`/p/a/t/h?query`, or absolute-form
    /// `http://host/p?q`, whose scheme and authority are dropped).
    public init(
        method: HTTPMethod,
        target: String,
        headers: HTTPHeaders = [:],
        body: Data = Data(),
        remoteAddress: String? = nil,
        requestID: String? = nil,
        version: String = "HTTP/1.1"
    ) {
        let (path, query) = Self.splitTarget(target)
        self.init(
            method: method, path: path, query: query, headers: headers, body: body,
            remoteAddress: remoteAddress, requestID: requestID, version: version)
    }

    /// The first decoded value of the named query item (an item without `=` gives `""`).
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }.map { $0.value ?? "" }
    }

    /// Every decoded value of the named query item, in order.
    public func queryValues(_ name: String) -> [String] {
        queryItems.filter { $0.name == name }.map { $0.value ?? "" }
    }

    static func splitTarget(_ target: String) -> (path: String, query: String?) {
        // The common case, an origin-form path without query or fragment, as is (byte scan: a
        // target without these bytes has no such characters either).
        if target.utf8.first == UInt8(ascii: "/"),
            !target.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
        {
            return (target, nil)
        }
        var rest = Substring(target)
        // Absolute-form (RFC 9112 §3.2.2): drop "scheme://authority".
        if !rest.hasPrefix("/"), let schemeEnd = rest.range(of: "://") {
            let afterScheme = rest[schemeEnd.upperBound...]
            rest = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? "/"
        }
        // A fragment is never sent by conforming clients; drop it if one is.
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        guard let mark = rest.firstIndex(of: "?") else {
            return (rest.isEmpty ? "/" : String(rest), nil)
        }
        let path = rest[..<mark]
        return (path.isEmpty ? "/" : String(path), String(rest[rest.index(after: mark)...]))
    }

    static func parseQuery(_ query: String) -> [QueryItem] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let equals = pair.firstIndex(of: "=") {
                let name = pair[..<equals]
                let value = pair[pair.index(after: equals)...]
                return QueryItem(
                    name: PercentDecoding.decode(name, plusAsSpace: true) ?? String(name),
                    value: PercentDecoding.decode(value, plusAsSpace: true) ?? String(value))
            }
            return QueryItem(name: PercentDecoding.decode(pair, plusAsSpace: true) ?? String(pair), value: nil)
        }
    }
}
