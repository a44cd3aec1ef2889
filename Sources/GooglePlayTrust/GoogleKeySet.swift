import AppStoreTrust
import Foundation

/// A JSON Web Key Set as Google publishes its OIDC signing keys
/// (`https://www.googleapis.com/oauth2/v3/certs`):
/// `{"keys": [{"kty": "RSA", "alg": "RS256", "use": "sig", "kid", "n", "e"}]}`.
///
/// Keys that are not RSA signing keys for RS256 are skipped (a set may grow other kinds); a key
/// of the right kind that is malformed, or a set with no usable key, is refused.
/// - Note: Immutable; `Sendable`.
public struct GoogleKeySet: Sendable {
    /// Google publishes two or three keys; more than 64 is not a key set.
    public static let maximumKeys = 64
    public static let maximumBytes = 256 * 1024

    /// The keys by `kid`.
    public let keys: [String: RSAPublicKey]

    public init(keys: [String: RSAPublicKey]) { self.keys = keys }

    public init(json: Data) throws(GooglePlayTrustError) {
        guard json.count <= Self.maximumBytes else {
            throw GooglePlayTrustError(.keySetMalformed, "key set of \(json.count) bytes is too large")
        }
        let document: JSONWebKeySetDocument
        do {
            document = try JSONDecoder().decode(JSONWebKeySetDocument.self, from: json)
        } catch {
            throw GooglePlayTrustError(.keySetMalformed, "not a JWKS document ({\"keys\": [...]})")
        }
        guard document.keys.count <= Self.maximumKeys else {
            throw GooglePlayTrustError(.keySetMalformed, "key set has \(document.keys.count) keys")
        }
        var keys: [String: RSAPublicKey] = [:]
        for (index, jwk) in document.keys.enumerated() {
            guard jwk.kty == "RSA", jwk.alg == nil || jwk.alg == "RS256", jwk.use == nil || jwk.use == "sig" else {
                continue
            }
            guard let kid = jwk.kid, !kid.isEmpty, kid.utf8.count <= 256 else {
                throw GooglePlayTrustError(.keySetMalformed, "key \(index) has no usable kid")
            }
            guard let n = jwk.n.flatMap({ Base64URL.decode($0) }), let e = jwk.e.flatMap({ Base64URL.decode($0) })
            else {
                throw GooglePlayTrustError(.keySetMalformed, "key \(index) has no base64url n and e")
            }
            guard keys[kid] == nil else {
                throw GooglePlayTrustError(.keySetMalformed, "kid \(kid) appears twice")
            }
            keys[kid] = try RSAPublicKey(modulus: n, exponent: e)
        }
        guard !keys.isEmpty else { throw GooglePlayTrustError(.keySetMalformed, "key set has no RS256 signing key") }
        self.keys = keys
    }

    /// The JWKS JSON of `keys` (sorted by kid), as Google writes it: what the simulator publishes.
    public static func json(of keys: [(kid: String, key: RSAPublicKey)]) -> Data {
        let document = JSONWebKeySetDocument(
            keys: keys.sorted { $0.kid < $1.kid }.map { entry in
                JSONWebKey(
                    kty: "RSA", alg: "RS256", use: "sig", kid: entry.kid, n: Base64URL.encode(entry.key.modulus),
                    e: Base64URL.encode(entry.key.exponent))
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings only: encoding cannot fail.
        return try! encoder.encode(document)
    }
}

struct JSONWebKeySetDocument: Codable {
    var keys: [JSONWebKey]
}

struct JSONWebKey: Codable {
    var kty: String?
    var alg: String?
    var use: String?
    var kid: String?
    var n: String?
    var e: String?
}
