/// The single error type of the Google Play trust module: a stable rule code naming the check
/// that refused, and a detail built only when read. Details never include keys or whole tokens.
/// - Note: Immutable value; `Sendable`.
public struct GooglePlayTrustError: Error, Sendable, CustomStringConvertible {
    public let rule: PlayTrustRule
    private let makeDetail: @Sendable () -> String

    public init(_ rule: PlayTrustRule, _ detail: @autoclosure @escaping @Sendable () -> String) {
        self.rule = rule
        self.makeDetail = detail
    }

    public var detail: String { makeDetail() }
    public var description: String { "[\(rule.rawValue)] \(detail)" }
}

/// Every rule the Play verifiers, parsers and signers refuse on. Raw values are stable codes for
/// logs, metrics and API errors; never rename one.
public enum PlayTrustRule: String, Sendable, Hashable, CaseIterable {
    // The push request's credentials.
    /// No `Authorization` header: Pub/Sub push without authentication configured.
    case tokenMissing = "push.tokenMissing"
    /// An `Authorization` header that is not `Bearer <token>`.
    case notBearer = "push.notBearer"
    // Shape of the compact JWT.
    case tooLarge = "format.tooLarge"
    case partCount = "format.partCount"
    case base64 = "format.base64"
    case headerNotJSON = "format.headerNotJSON"
    case payloadNotJSON = "format.payloadNotJSON"
    // Algorithm, key and signature.
    /// `alg: none`: an unsigned token.
    case algorithmNone = "alg.none"
    /// Any algorithm but RS256 (HS256, ES256, RS512, PS256, …).
    case algorithmNotRS256 = "alg.notRS256"
    case kidMissing = "key.kidMissing"
    /// The token's `kid` is in no key of the trusted set, even after a refetch.
    case kidUnknown = "key.kidUnknown"
    /// The key set could not be loaded (file unreadable, URL unreachable) and none is cached.
    case keySetUnavailable = "key.setUnavailable"
    case signatureInvalid = "signature.invalid"
    // Claims of a Google-signed OIDC token.
    case issuerMismatch = "claim.issuer"
    case audienceMismatch = "claim.audience"
    case emailMismatch = "claim.email"
    case emailNotVerified = "claim.emailNotVerified"
    case expired = "claim.expired"
    /// `iat` later than now plus the leeway.
    case issuedInFuture = "claim.issuedInFuture"
    /// `exp` or `iat` absent.
    case timeClaimMissing = "claim.timeMissing"
    // Keys and key files.
    case keySetMalformed = "keyset.malformed"
    case keyMalformed = "key.malformed"
    case keyNotRSA = "key.notRSA"
    /// An RSA key shorter than 2048 bits.
    case keyTooSmall = "key.rsaTooSmall"
    case serviceAccountMalformed = "serviceAccount.malformed"
    case signingFailed = "signing.failed"
}
