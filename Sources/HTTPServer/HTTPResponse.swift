import Foundation

/// An HTTP response to send: status, header fields and a complete body.
///
/// `Content-Length` is computed by the server from `body`; a `Content-Length` or
/// `Transfer-Encoding` field set here is ignored. The server adds `X-Request-Id` when absent.
/// - Note: Immutable value; `Sendable`.
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: Data

    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Data(text.utf8))
    }

    /// An `application/json` response with already-encoded JSON.
    public static func json(data: Data, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: data)
    }

    /// An `application/json` response encoding `value` with sorted keys.
    public static func json<Value: Encodable>(
        _ value: Value, status: HTTPStatus = .ok, encoder: JSONEncoder = HTTPResponse.defaultEncoder()
    ) throws -> HTTPResponse {
        try json(data: encoder.encode(value), status: status)
    }

    /// The encoder `json(_:status:encoder:)` uses by default: sorted keys, no escaped slashes.
    public static func defaultEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
