import Foundation

/// The OAuth2 JWT-bearer assertion (RFC 7523) a service account signs to get an access token:
/// RS256, header `kid` = `private_key_id`, claims `iss` = the account's email, `scope`, `aud` =
/// the key's `token_uri`, `iat` and `exp` at most one hour later (Google refuses longer).
public enum ServiceAccountAssertion {
    /// The scope of the Play Developer API.
    public static let androidPublisherScope = "https://www.googleapis.com/auth/androidpublisher"
    /// Google's upper bound on an assertion's lifetime.
    public static let maximumLifetime: TimeInterval = 3600

    /// The claims of an assertion.
    /// - Note: Immutable value; `Sendable`.
    public struct Claims: Sendable, Hashable, Codable {
        public var iss: String
        public var scope: String
        public var aud: String
        public var iat: Int64
        public var exp: Int64

        public init(iss: String, scope: String, aud: String, iat: Int64, exp: Int64) {
            self.iss = iss
            self.scope = scope
            self.aud = aud
            self.iat = iat
            self.exp = exp
        }
    }

    /// A signed assertion for `key`, issued at `now`, valid `lifetime` seconds (clamped to an hour).
    public static func sign(
        key: ServiceAccountKey, scope: String = androidPublisherScope, now: Date,
        lifetime: TimeInterval = maximumLifetime
    ) throws(GooglePlayTrustError) -> String {
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        let seconds = Int64(min(max(lifetime, 1), maximumLifetime))
        let claims = Claims(
            iss: key.clientEmail, scope: scope, aud: key.tokenURI.absoluteString, iat: issuedAt,
            exp: issuedAt + seconds)
        return try RS256JWTSigner.sign(claims: claims, key: key.privateKey, kid: key.privateKeyId)
    }

    /// Verifies an assertion against the account's public key and reads its claims: what a token
    /// endpoint does (the Play simulator's). Checks RS256, the signature, `aud` = `audience`, the
    /// lifetime (`exp` after now, at most an hour after `iat`, `iat` not in the future beyond
    /// `leeway`).
    public static func verify(
        _ assertion: String, publicKey: RSAPublicKey, audience: String, now: Date, leeway: TimeInterval = 60
    ) throws(GooglePlayTrustError) -> Claims {
        let jwt = try CompactJWT(assertion)
        try jwt.requireRS256()
        guard publicKey.verifyRS256(signature: jwt.signature, message: jwt.signingInput) else {
            throw GooglePlayTrustError(.signatureInvalid, "assertion signature does not verify")
        }
        let claims = try CompactJWT.decodeObject(Claims.self, from: jwt.payload, rule: .payloadNotJSON, part: "payload")
        guard claims.aud == audience else {
            throw GooglePlayTrustError(.audienceMismatch, "assertion audience is not the token endpoint")
        }
        let nowSeconds = now.timeIntervalSince1970
        guard Double(claims.exp) + leeway > nowSeconds else {
            throw GooglePlayTrustError(.expired, "assertion expired")
        }
        guard Double(claims.iat) - leeway <= nowSeconds else {
            throw GooglePlayTrustError(.issuedInFuture, "assertion issued in the future")
        }
        guard claims.exp - claims.iat <= Int64(maximumLifetime) else {
            throw GooglePlayTrustError(.expired, "assertion lifetime exceeds one hour")
        }
        return claims
    }

    /// The `kid` header of an assertion, before verification: which account key to verify with.
    public static func keyId(of assertion: String) throws(GooglePlayTrustError) -> String? {
        try CompactJWT(assertion).header.kid
    }
}
