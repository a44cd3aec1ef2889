import Foundation

/// The module's one error type: an HTTP status plus a stable machine code and a message, sent
/// to the client as `{"error":{"code":"…","message":"…"}}`.
///
/// Throw it from handlers and middleware to choose the response; any other error thrown to the
/// router becomes `500 internal_error` with a generic message (its description never reaches
/// the client). Messages must not contain secrets: they are sent verbatim.
/// - Note: Immutable value; `Sendable`.
public struct HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: HTTPStatus
    /// A stable snake_case code clients can switch on, e.g. `not_found`.
    public var code: String
    public var message: String
    /// Extra response fields, e.g. `Allow` for 405 or `Retry-After` for 503.
    public var headers: HTTPHeaders

    public init(status: HTTPStatus, code: String, message: String, headers: HTTPHeaders = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public var description: String { "HTTPError(\(status.code) \(code): \(message))" }

    public static func badRequest(_ message: String, code: String = "bad_request") -> HTTPError {
        HTTPError(status: .badRequest, code: code, message: message)
    }

    public static func unauthorized(_ message: String = "Authentication required.") -> HTTPError {
        HTTPError(status: .unauthorized, code: "unauthorized", message: message)
    }

    public static func forbidden(_ message: String = "Forbidden.") -> HTTPError {
        HTTPError(status: .forbidden, code: "forbidden", message: message)
    }

    public static func notFound(_ message: String = "No such resource.") -> HTTPError {
        HTTPError(status: .notFound, code: "not_found", message: message)
    }

    public static func methodNotAllowed(allowed: [HTTPMethod]) -> HTTPError {
        HTTPError(
            status: .methodNotAllowed, code: "method_not_allowed",
            message: "Method not allowed; allowed: \(allowed.map(\.rawValue).joined(separator: ", ")).",
            headers: ["Allow": allowed.map(\.rawValue).joined(separator: ", ")])
    }

    public static func contentTooLarge(limit: Int) -> HTTPError {
        HTTPError(
            status: .contentTooLarge, code: "content_too_large",
            message: "Request body exceeds the limit of \(limit) bytes.")
    }

    public static func internalError(_ message: String = "Internal server error.") -> HTTPError {
        HTTPError(status: .internalServerError, code: "internal_error", message: message)
    }

    public static func serviceUnavailable(_ message: String, code: String = "unavailable") -> HTTPError {
        HTTPError(status: .serviceUnavailable, code: code, message: message)
    }

    /// The JSON error response for this error, carrying `requestID` in `X-Request-Id`.
    public func response(requestID: String? = nil) -> HTTPResponse {
        var response = HTTPResponse.json(data: jsonBody, status: status)
        for field in headers { response.headers.add(name: field.name, value: field.value) }
        if let requestID { response.headers[RequestID.headerName] = requestID }
        return response
    }

    /// `{"error":{"code":…,"message":…}}` as UTF-8 JSON.
    public var jsonBody: Data {
        struct Body: Encodable {
            struct Detail: Encodable {
                let code: String
                let message: String
            }
            let error: Detail
        }
        // Encoding two strings cannot fail; fall back to a constant body rather than trap.
        return (try? HTTPResponse.defaultEncoder().encode(Body(error: .init(code: code, message: message))))
            ?? Data(#"{"error":{"code":"internal_error","message":"Internal server error."}}"#.utf8)
    }

    /// Maps any error to the HTTP error sent: `HTTPError` as is, anything else as 500.
    public static func from(_ error: any Error) -> HTTPError {
        (error as? HTTPError) ?? .internalError()
    }
}
