import Foundation

/// One rule applied to the claims of a push token whose signature already verified: `nil` to
/// accept, or the error naming the rule. `PushAuthenticationVerifier` runs them in order and
/// the first refusal wins.
public protocol PushTokenPolicy: Sendable {
    func check(_ claims: OIDCTokenClaims, now: Date) -> GooglePlayTrustError?
}

/// `iss` must be Google's accounts issuer, in either of the two spellings Google uses.
public struct GoogleIssuerPolicy: PushTokenPolicy {
    public static let issuers: Set<String> = ["https://accounts.google.com", "accounts.google.com"]

    public init() {}

    public func check(_ claims: OIDCTokenClaims, now: Date) -> GooglePlayTrustError? {
        guard let issuer = claims.iss, Self.issuers.contains(issuer) else {
            return GooglePlayTrustError(.issuerMismatch, "token issuer is not accounts.google.com")
        }
        return nil
    }
}

/// `aud` must contain the audience configured on the push subscription (and in Storekeeper).
public struct AudiencePolicy: PushTokenPolicy {
    public let audience: String

    public init(audience: String) { self.audience = audience }

    public func check(_ claims: OIDCTokenClaims, now: Date) -> GooglePlayTrustError? {
        guard let audiences = claims.aud, audiences.contains(audience) else {
            return GooglePlayTrustError(.audienceMismatch, "token audience is not the configured audience")
        }
        return nil
    }
}

/// `email` must be the push subscription's service account, and Google must say it is verified.
public struct ServiceAccountEmailPolicy: PushTokenPolicy {
    public let email: String

    public init(email: String) { self.email = email }

    public func check(_ claims: OIDCTokenClaims, now: Date) -> GooglePlayTrustError? {
        // Email addresses compare case-insensitively in their domain; Google writes them lower-case.
        guard let tokenEmail = claims.email, tokenEmail.lowercased() == email.lowercased() else {
            return GooglePlayTrustError(.emailMismatch, "token email is not the configured service account")
        }
        guard claims.emailVerified == true else {
            return GooglePlayTrustError(.emailNotVerified, "token email_verified is not true")
        }
        return nil
    }
}

/// `exp` must be in the future and `iat` not in the future, each with `leeway` for clock skew.
public struct TokenLifetimePolicy: PushTokenPolicy {
    public let leeway: TimeInterval

    public init(leeway: TimeInterval = 60) { self.leeway = leeway }

    public func check(_ claims: OIDCTokenClaims, now: Date) -> GooglePlayTrustError? {
        guard let exp = claims.exp, let iat = claims.iat else {
            return GooglePlayTrustError(.timeClaimMissing, "token has no exp or no iat")
        }
        let nowSeconds = now.timeIntervalSince1970
        guard Double(exp) + leeway > nowSeconds else {
            return GooglePlayTrustError(.expired, "token expired at \(exp), now \(Int64(nowSeconds))")
        }
        guard Double(iat) - leeway <= nowSeconds else {
            return GooglePlayTrustError(.issuedInFuture, "token issued at \(iat), after now \(Int64(nowSeconds))")
        }
        return nil
    }
}
