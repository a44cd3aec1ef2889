import AppStoreModels
import Foundation
import Synchronization

/// The claims of an App Store Server API bearer token (App Store Connect in-app purchase key).
public struct AppStoreConnectClaims: Codable, Sendable, Hashable {
    public var iss: String
    /// Apple's Python client sends no `iat`; the verifier accepts its absence.
    public var iat: Int64?
    public var exp: Int64
    public var aud: String
    public var bid: String

    public init(iss: String, iat: Int64?, exp: Int64, aud: String, bid: String) {
        self.iss = iss
        self.iat = iat
        self.exp = exp
        self.aud = aud
        self.bid = bid
    }

    public static let audience = "appstoreconnect-v1"
}

/// Issues ES256 bearer tokens for the App Store Server API from a `.p8` key, reusing one token
/// until shortly before it expires.
///
/// Header `alg`/`kid`/`typ`; claims `iss`, `iat`, `exp`, `aud` = `appstoreconnect-v1`, `bid`.
/// Apple refuses tokens that live over 60 minutes, so longer lifetimes are refused here.
/// - Note: Thread-safe: the current token sits behind a `Mutex`.
public final class AppStoreConnectTokenSigner: Sendable {
    public let keyId: String
    public let issuerId: String
    public let bundleId: String
    public let lifetimeSeconds: Int64
    /// A token is replaced once it has less than this left, so no request carries one that
    /// expires in flight.
    public let refreshMarginSeconds: Int64
    private let signer: JWSSigner
    private let clock: @Sendable () -> Timestamp
    private let current = Mutex<(token: String, expires: Int64)?>(nil)

    public init(
        key: PrivateKey, keyId: String, issuerId: String, bundleId: String,
        lifetimeSeconds: Int64 = 20 * 60, refreshMarginSeconds: Int64 = 60,
        clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) }
    ) throws(TrustError) {
        guard lifetimeSeconds > refreshMarginSeconds, lifetimeSeconds <= 60 * 60 else {
            throw TrustError(.tokenLifetime, "token lifetime must be at most 60 minutes and above the refresh margin")
        }
        self.signer = JWSSigner(key: key)
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.lifetimeSeconds = lifetimeSeconds
        self.refreshMarginSeconds = refreshMarginSeconds
        self.clock = clock
    }

    /// The token to send now: the cached one while it has more than the margin left.
    public func token() throws(TrustError) -> String {
        let now = clock().secondsSince1970
        if let cached = current.withLock({ $0 }), cached.expires - now > refreshMarginSeconds {
            return cached.token
        }
        let claims = AppStoreConnectClaims(
            iss: issuerId, iat: now, exp: now + lifetimeSeconds, aud: AppStoreConnectClaims.audience, bid: bundleId)
        let token = try signer.sign(claims, header: ["kid": keyId, "typ": "JWT"])
        current.withLock { $0 = (token, claims.exp) }
        return token
    }

    /// Drops the cached token (after Apple answered 401) so the next call signs a fresh one.
    public func invalidate() { current.withLock { $0 = nil } }
}

/// Checks App Store Server API bearer tokens the way Apple does (used by the simulator):
/// ES256 by a known key id, `aud` = `appstoreconnect-v1`, not expired, a lifetime of at most
/// 60 minutes, `iat` optional.
/// - Note: Immutable; `Sendable`.
public struct AppStoreConnectTokenVerifier: Sendable {
    public let keys: [String: PublicKey]
    public let clockSkewSeconds: Int64

    public init(keys: [String: PublicKey], clockSkewSeconds: Int64 = 60) {
        self.keys = keys
        self.clockSkewSeconds = clockSkewSeconds
    }

    public func verify(_ token: String, now: Timestamp) throws(TrustError) -> (
        keyId: String, claims: AppStoreConnectClaims
    ) {
        let jws = try CompactJWS(token)
        guard let kid = try jws.es256Header().kid, let key = keys[kid] else {
            throw TrustError(.signatureInvalid, "token key id is unknown")
        }
        try jws.verifyES256Signature(with: key, signer: "the key named by kid")
        let claims = try CompactJWS.decodeObject(AppStoreConnectClaims.self, from: jws.payload, part: "payload")
        guard claims.aud == AppStoreConnectClaims.audience else {
            throw TrustError(.tokenAudience, "token audience is not appstoreconnect-v1")
        }
        let seconds = now.secondsSince1970
        guard claims.exp > seconds - clockSkewSeconds else { throw TrustError(.tokenExpired, "token has expired") }
        let issued = claims.iat ?? seconds
        guard issued <= seconds + clockSkewSeconds else { throw TrustError(.tokenClaims, "token issued in the future") }
        guard claims.exp - issued <= 60 * 60 else {
            throw TrustError(.tokenLifetime, "token lifetime exceeds 60 minutes")
        }
        return (kid, claims)
    }
}
