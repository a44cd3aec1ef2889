/// The single error type of the trust module: a stable rule code that names the check that
/// refused, a category matching Apple's `VerificationError`, and a detail built only when read.
///
/// Details never include secrets or whole tokens.
/// - Note: Immutable value; `Sendable`.
public struct TrustError: Error, Sendable, CustomStringConvertible {
    public let rule: TrustRule
    private let makeDetail: @Sendable () -> String

    public init(_ rule: TrustRule, _ detail: @autoclosure @escaping @Sendable () -> String) {
        self.rule = rule
        self.makeDetail = detail
    }

    public var category: TrustErrorCategory { rule.category }
    public var detail: String { makeDetail() }
    public var description: String { "\(category.rawValue) [\(rule.rawValue)]: \(detail)" }
}

/// Apple's verification outcome classes (Swift `VerificationError`, Python `VerificationStatus`),
/// plus the categories the rest of the trust module needs.
public enum TrustErrorCategory: String, Sendable, Hashable, CaseIterable {
    case invalidFormat = "INVALID_JWT_FORMAT"
    case invalidCertificate = "INVALID_CERTIFICATE"
    case verificationFailure = "VERIFICATION_FAILURE"
    /// The check could not be completed (OCSP responder unreachable): try again later.
    case retryableVerificationFailure = "RETRYABLE_VERIFICATION_FAILURE"
    case invalidAppIdentifier = "INVALID_APP_IDENTIFIER"
    case invalidEnvironment = "INVALID_ENVIRONMENT"
    case invalidConfiguration = "INVALID_CONFIGURATION"
    case invalidKey = "INVALID_KEY"
    case invalidReceipt = "INVALID_RECEIPT"
}

/// Every rule a verifier or signer can refuse on. Raw values are stable codes for logs,
/// metrics and API errors; never rename one.
public enum TrustRule: String, Sendable, Hashable, CaseIterable {
    // Shape of the compact JWS.
    case tooLarge = "format.tooLarge"
    case partCount = "format.partCount"
    case base64 = "format.base64"
    case headerNotJSON = "format.headerNotJSON"
    case payloadNotJSON = "format.payloadNotJSON"
    case duplicateKey = "format.duplicateKey"
    case x5cMissing = "format.x5cMissing"
    case payloadSchema = "format.payloadSchema"
    /// A signed payload of another type than the one asked for (a renewal info posted as a
    /// notification): refused before any claim inside it is read.
    case payloadTypeMismatch = "format.payloadType"
    // Algorithm and signature.
    case algorithmNotES256 = "alg.notES256"
    case signatureLength = "signature.notRawP256"
    case signatureInvalid = "signature.invalid"
    case leafKeyNotP256 = "key.leafNotP256"
    // Certificates and chain.
    case chainLength = "chain.length"
    case certificateMalformed = "chain.certificateMalformed"
    case chainUntrusted = "chain.untrustedRoot"
    case chainExpired = "chain.expiredAtEffectiveDate"
    case chainNotYetValid = "chain.notYetValidAtEffectiveDate"
    case chainInvalid = "chain.invalid"
    case intermediateOIDMissing = "chain.intermediateOIDMissing"
    case leafOIDMissing = "chain.leafOIDMissing"
    // Online revocation.
    case certificateRevoked = "ocsp.revoked"
    case ocspUnreachable = "ocsp.unreachable"
    case ocspInvalidResponse = "ocsp.invalidResponse"
    case ocspURLMissing = "ocsp.urlMissing"
    // Claims.
    case bundleIdMismatch = "app.bundleIdMismatch"
    case appAppleIdMismatch = "app.appAppleIdMismatch"
    case environmentMismatch = "environment.mismatch"
    // Configuration.
    case appAppleIdRequired = "config.appAppleIdRequired"
    case noTrustedRoots = "config.noTrustedRoots"
    case unsignedEnvironmentWithProduction = "config.unsignedWithProduction"
    // Keys and signing.
    case keyMalformed = "key.malformed"
    case keyNotP256 = "key.notP256"
    case signingFailed = "signing.failed"
    // API tokens (App Store Connect JWT).
    case tokenExpired = "jwt.expired"
    case tokenAudience = "jwt.audience"
    case tokenClaims = "jwt.claims"
    case tokenLifetime = "jwt.lifetimeTooLong"
    // Receipts.
    case receiptMalformed = "receipt.malformed"
    case receiptSignatureInvalid = "receipt.signatureInvalid"
    case receiptChainUntrusted = "receipt.chainUntrusted"

    public var category: TrustErrorCategory {
        switch self {
        case .tooLarge, .partCount, .base64, .headerNotJSON, .payloadNotJSON, .duplicateKey, .x5cMissing,
            .payloadSchema, .payloadTypeMismatch, .algorithmNotES256:
            return .invalidFormat
        case .chainLength, .certificateMalformed, .chainUntrusted, .chainExpired, .chainNotYetValid,
            .chainInvalid, .intermediateOIDMissing, .leafOIDMissing, .leafKeyNotP256, .certificateRevoked,
            .ocspInvalidResponse, .ocspURLMissing:
            return .invalidCertificate
        case .signatureLength, .signatureInvalid, .tokenExpired, .tokenAudience, .tokenClaims, .tokenLifetime:
            return .verificationFailure
        case .ocspUnreachable:
            return .retryableVerificationFailure
        case .bundleIdMismatch, .appAppleIdMismatch:
            return .invalidAppIdentifier
        case .environmentMismatch:
            return .invalidEnvironment
        case .appAppleIdRequired, .noTrustedRoots, .unsignedEnvironmentWithProduction:
            return .invalidConfiguration
        case .keyMalformed, .keyNotP256, .signingFailed:
            return .invalidKey
        case .receiptMalformed, .receiptSignatureInvalid, .receiptChainUntrusted:
            return .invalidReceipt
        }
    }
}
