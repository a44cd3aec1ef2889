import GooglePlayModels

/// Why the Play simulator refused an operation or an API call, with the answer Google gives:
/// the HTTP code, Google's canonical status and a message (the API's error shape), or an OAuth2
/// error code for the token endpoint.
/// - Note: Immutable value; `Sendable`.
public struct PlaySimulatorError: Error, Sendable, Hashable, CustomStringConvertible {
    public let httpStatus: Int
    public let status: String
    public let message: String
    /// The legacy `errors[0].reason` (`notFound`, `required`, …).
    public let reason: String

    public init(_ httpStatus: Int, _ status: String, _ message: String, reason: String) {
        self.httpStatus = httpStatus
        self.status = status
        self.message = message
        self.reason = reason
    }

    public var description: String { "\(httpStatus) \(status): \(message)" }

    /// The body Google answers with.
    public var response: GoogleErrorResponse {
        GoogleErrorResponse(
            error: GoogleError(
                code: httpStatus, message: message, status: status,
                errors: [GoogleErrorItem(message: message, domain: "global", reason: reason)]))
    }

    static let missingCredentials = PlaySimulatorError(
        401, "UNAUTHENTICATED",
        "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
        reason: "required")
    static let invalidCredentials = PlaySimulatorError(
        401, "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
        reason: "authError")
    static let purchaseNotFound = PlaySimulatorError(
        404, "NOT_FOUND", "The purchase token was not found.", reason: "purchaseTokenNotFound")
    static let applicationNotFound = PlaySimulatorError(
        404, "NOT_FOUND", "No application was found for the given package name.", reason: "applicationNotFound")
    static let orderNotFound = PlaySimulatorError(
        404, "NOT_FOUND", "The order was not found.", reason: "orderNotFound")
    static let productMismatch = PlaySimulatorError(
        400, "INVALID_ARGUMENT", "The product id does not match the purchase token.", reason: "productIdMismatch")
    static let invalidState = PlaySimulatorError(
        400, "FAILED_PRECONDITION", "The purchase is not in a valid state to perform the desired operation.",
        reason: "purchaseInvalidState")

    static func invalidArgument(_ message: String) -> PlaySimulatorError {
        PlaySimulatorError(400, "INVALID_ARGUMENT", message, reason: "invalid")
    }
}
