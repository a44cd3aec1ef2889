import Foundation

/// Checks the credentials of a Pub/Sub push request carrying a Google Play notification.
///
/// Pub/Sub, configured with push authentication, sends `Authorization: Bearer <OIDC token>`:
/// an RS256 JWT signed by Google for the configured audience and service account. The verifier
/// reads the header, refuses every algorithm but RS256, finds the key by `kid` in the cached key
/// set (following rotation), verifies the signature, and only then reads the claims and runs its
/// policies in order: issuer, audience, service-account email (verified), lifetime. The first
/// refusal wins and carries its rule code.
/// - Note: Immutable; `Sendable`. The key cache is an actor shared by every call.
public struct PushAuthenticationVerifier: Sendable {
    public let keys: GoogleKeySetCache
    public let policies: [any PushTokenPolicy]

    /// The standard policy set for `audience` and `serviceAccountEmail`, with `leeway` seconds of
    /// clock skew on `exp` and `iat`.
    public init(
        audience: String, serviceAccountEmail: String, keys: GoogleKeySetCache, leeway: TimeInterval = 60
    ) {
        self.init(
            keys: keys,
            policies: [
                GoogleIssuerPolicy(), AudiencePolicy(audience: audience),
                ServiceAccountEmailPolicy(email: serviceAccountEmail), TokenLifetimePolicy(leeway: leeway),
            ])
    }

    public init(keys: GoogleKeySetCache, policies: [any PushTokenPolicy]) {
        self.keys = keys
        self.policies = policies
    }

    /// Verifies the value of the request's `Authorization` header (`nil` when absent) at `now`.
    public func verify(authorization: String?, now: Date) async throws(GooglePlayTrustError) -> VerifiedPushToken {
        guard let authorization, !authorization.isEmpty else {
            throw GooglePlayTrustError(.tokenMissing, "the push request has no Authorization header")
        }
        let prefix = "bearer "
        guard authorization.count > prefix.count, authorization.lowercased().hasPrefix(prefix) else {
            throw GooglePlayTrustError(.notBearer, "the Authorization header is not a Bearer token")
        }
        let token = String(authorization.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
        return try await verify(token: token, now: now)
    }

    /// Verifies a bare compact JWT at `now`.
    public func verify(token: String, now: Date) async throws(GooglePlayTrustError) -> VerifiedPushToken {
        let jwt = try CompactJWT(token)
        try jwt.requireRS256()
        guard let kid = jwt.header.kid, !kid.isEmpty else {
            throw GooglePlayTrustError(.kidMissing, "JWT header has no kid")
        }
        let key = try await keys.key(kid: kid, now: now)
        guard key.verifyRS256(signature: jwt.signature, message: jwt.signingInput) else {
            throw GooglePlayTrustError(.signatureInvalid, "JWT signature does not verify with key \(kid)")
        }
        let claims = try CompactJWT.decodeObject(
            OIDCTokenClaims.self, from: jwt.payload, rule: .payloadNotJSON, part: "payload")
        for policy in policies {
            if let refusal = policy.check(claims, now: now) { throw refusal }
        }
        return VerifiedPushToken(claims: claims, kid: kid)
    }
}

/// The claims of a push token that passed `PushAuthenticationVerifier`: only the trust module
/// constructs one.
/// - Note: Immutable value; `Sendable`.
public struct VerifiedPushToken: Sendable, Hashable {
    public let claims: OIDCTokenClaims
    /// The key that signed it.
    public let kid: String

    init(claims: OIDCTokenClaims, kid: String) {
        self.claims = claims
        self.kid = kid
    }
}
