import Foundation

/// One HTTP request as the App Store clients send it.
/// - Note: Immutable value; `Sendable`.
public struct HTTPTransportRequest: Sendable {
    public var method: String
    public var url: URL
    /// Header fields in sending order; names as written.
    public var headers: [(name: String, value: String)]
    public var body: Data?
    public var timeout: Duration
    /// An IP address literal (IPv6 without brackets) to connect to instead of resolving the
    /// URL's host, which still names TLS SNI, certificate verification and the `Host` header:
    /// set by a caller that already checked where the name resolves (webhook delivery). A
    /// transport that cannot connect to a given address must fail the request rather than
    /// resolve the name itself.
    public var connectAddress: String?

    public init(
        method: String, url: URL, headers: [(name: String, value: String)] = [], body: Data? = nil,
        timeout: Duration = .seconds(30), connectAddress: String? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectAddress = connectAddress
    }

    /// The first value of a header, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// One complete HTTP response, body already bounded by the transport.
/// - Note: Immutable value; `Sendable`.
public struct HTTPTransportResponse: Sendable {
    public var status: Int
    /// Header fields with lower-cased names (HTTP names are case-insensitive).
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(
            headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Why a transport produced no response. `kind` decides whether a retry is safe: only
/// `.notConnected` proves that the server never saw the request.
/// - Note: Immutable value; `Sendable`.
public struct HTTPTransportFailure: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// DNS failure, connection refused: the request never left this process.
        case notConnected
        /// No (complete) answer in time; the server may have processed the request.
        case timedOut
        /// The connection broke after the request was (maybe) sent.
        case connectionLost
        /// The body grew beyond the limit; reading stopped.
        case responseTooLarge
        case cancelled
        case other
    }

    public let kind: Kind
    public let detail: String
    /// The TLS handshake failed (certificate or protocol): the request was not sent.
    public let isTLSFailure: Bool

    public init(_ kind: Kind, _ detail: String, isTLSFailure: Bool = false) {
        self.kind = kind
        self.detail = detail
        self.isTLSFailure = isTLSFailure
    }

    public var description: String { "\(kind.rawValue): \(detail)" }
}

/// Sends one HTTP request and returns the whole response, reading at most
/// `maximumResponseBytes` of body. Production uses `URLSessionTransport`; tests inject
/// failures with their own conformance.
/// - Note: Implementations must be safe to call from many tasks at once.
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPTransportRequest, maximumResponseBytes: Int) async throws(HTTPTransportFailure)
        -> HTTPTransportResponse
}
