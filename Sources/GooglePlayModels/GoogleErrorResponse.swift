/// The body of an error from a Google API:
/// `{"error": {"code": 404, "message": "…", "status": "NOT_FOUND", "errors": [{"message", "domain", "reason"}]}}`.
/// - Note: Immutable value; `Sendable`.
public struct GoogleErrorResponse: Sendable, Hashable, Codable {
    public var error: GoogleError

    public init(error: GoogleError) { self.error = error }
}

/// The `error` member: the HTTP `code`, Google's canonical `status` (`NOT_FOUND`,
/// `PERMISSION_DENIED`, `UNAUTHENTICATED`, …) and the legacy `errors` list.
/// - Note: Immutable value; `Sendable`.
public struct GoogleError: Sendable, Hashable, Codable {
    public var code: Int
    public var message: String?
    public var status: String?
    public var errors: [GoogleErrorItem]?

    public init(code: Int, message: String? = nil, status: String? = nil, errors: [GoogleErrorItem]? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.errors = errors
    }
}

/// One entry of the legacy `errors` list (`{"message", "domain": "global", "reason": "notFound"}`).
/// - Note: Immutable value; `Sendable`.
public struct GoogleErrorItem: Sendable, Hashable, Codable {
    public var message: String?
    public var domain: String?
    public var reason: String?
    public var location: String?
    public var locationType: String?

    public init(
        message: String? = nil, domain: String? = nil, reason: String? = nil, location: String? = nil,
        locationType: String? = nil
    ) {
        self.message = message
        self.domain = domain
        self.reason = reason
        self.location = location
        self.locationType = locationType
    }
}

/// The body of an OAuth2 token endpoint's refusal (RFC 6749 §5.2):
/// `{"error": "invalid_grant", "error_description": "…"}`.
/// - Note: Immutable value; `Sendable`.
public struct OAuthErrorResponse: Error, Sendable, Hashable, Codable {
    public var error: String
    public var errorDescription: String?

    public init(error: String, errorDescription: String? = nil) {
        self.error = error
        self.errorDescription = errorDescription
    }

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }
}

/// The body of an OAuth2 token endpoint's success (RFC 6749 §5.1).
/// - Note: Immutable value; `Sendable`.
public struct OAuthTokenResponse: Sendable, Hashable, Codable {
    public var accessToken: String
    public var tokenType: String
    /// Lifetime in seconds.
    public var expiresIn: Int

    public init(accessToken: String, tokenType: String = "Bearer", expiresIn: Int) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
    }
}
