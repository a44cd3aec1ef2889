import Foundation

/// Why a call to Google (the Play Developer API, the OAuth2 token endpoint, a key-set URL)
/// failed.
///
/// `code` is stable; when Google answered, `httpStatus`, `googleStatus` (`NOT_FOUND`, …) or
/// `oauthError` (`invalid_grant`, …) and `googleMessage` say what it said. Descriptions never
/// contain the access token, the assertion or the private key.
/// - Note: Immutable value; `Sendable`.
public struct GooglePlayClientError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Google answered with an HTTP error status (see `httpStatus`, `googleStatus`).
        case apiError = "play.apiError"
        /// The token endpoint refused the assertion (see `oauthError`).
        case tokenRefused = "play.tokenRefused"
        /// No usable HTTP response: connection refused, timed out, reset.
        case transportFailed = "play.transportFailed"
        /// The response body exceeded the configured limit; it was not read further.
        case responseTooLarge = "play.responseTooLarge"
        /// A 2xx body that is not the JSON Google documents, or paging that does not advance.
        case malformedResponse = "play.malformedResponse"
        /// The service-account assertion could not be signed.
        case assertionSigningFailed = "play.assertionSigningFailed"
        /// The caller's arguments cannot form a valid request.
        case invalidRequest = "play.invalidRequest"
        case cancelled = "play.cancelled"
    }

    public let code: Code
    public let httpStatus: Int?
    /// Google's canonical status string of an API error.
    public let googleStatus: String?
    /// The OAuth2 `error` of a refused token request.
    public let oauthError: String?
    /// Google's message, verbatim.
    public let googleMessage: String?
    /// The method (`purchases.subscriptionsv2.get`, `oauth2.token`).
    public let method: String?
    public let attempts: Int
    public let detail: String
    /// How long Google asked us to wait when the call gave up on a 429 or 503.
    public let retryAfter: Duration?

    public init(
        _ code: Code, _ detail: String, httpStatus: Int? = nil, googleStatus: String? = nil, oauthError: String? = nil,
        googleMessage: String? = nil, method: String? = nil, attempts: Int = 0, retryAfter: Duration? = nil
    ) {
        self.code = code
        self.detail = detail
        self.httpStatus = httpStatus
        self.googleStatus = googleStatus
        self.oauthError = oauthError
        self.googleMessage = googleMessage
        self.method = method
        self.attempts = attempts
        self.retryAfter = retryAfter
    }

    /// Whether the same call may succeed later without a change on our side.
    public var isTransient: Bool {
        switch code {
        case .transportFailed: return true
        case .apiError, .tokenRefused:
            guard let httpStatus else { return false }
            return httpStatus == 429 || httpStatus >= 500
        default: return false
        }
    }

    public var description: String {
        var parts = [code.rawValue]
        if let method { parts.append("method=\(method)") }
        if let httpStatus { parts.append("http=\(httpStatus)") }
        if let googleStatus { parts.append("status=\(googleStatus)") }
        if let oauthError { parts.append("error=\(oauthError)") }
        if attempts > 1 { parts.append("attempts=\(attempts)") }
        var text = parts.joined(separator: " ") + ": " + detail
        if let googleMessage, !googleMessage.isEmpty { text += " (Google: \(googleMessage.prefix(300)))" }
        return text
    }

    func with(attempts: Int, detail: String? = nil, retryAfter: Duration? = nil) -> GooglePlayClientError {
        GooglePlayClientError(
            code, detail ?? self.detail, httpStatus: httpStatus, googleStatus: googleStatus, oauthError: oauthError,
            googleMessage: googleMessage, method: method, attempts: attempts, retryAfter: retryAfter ?? self.retryAfter)
    }
}
