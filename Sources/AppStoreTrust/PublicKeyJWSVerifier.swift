import Foundation

/// Verifies a compact JWS against one public key the caller already trusts: App Store Server
/// API bearer tokens, signature-creator tokens, anything signed without a certificate chain
/// (`storekeeper jws verify --public-key`).
///
/// Rules, in order, first refusal wins, with `SignedDataVerifier`'s code for each:
/// size ≤ 1 MiB → 3 base64url parts → header is a JSON object without repeated keys → `alg` is
/// exactly `ES256` → 64-byte r‖s signature that verifies with the key → payload is a JSON
/// object without repeated keys (checked after the signature: unsigned bytes are not parsed).
///
/// It proves less than `Verified<…>`: only that the holder of this key signed these bytes,
/// nothing about Apple. So it returns a `KeyVerifiedJWS`, never a `Verified<…>`.
/// - Note: Immutable; `Sendable` (verifying with a `PublicKey` is thread-safe).
public struct PublicKeyJWSVerifier: Sendable {
    public let publicKey: PublicKey

    /// Refuses a key ES256 cannot verify with (`key.notP256`) here rather than on every token.
    public init(publicKey: PublicKey) throws(TrustError) {
        guard publicKey.isP256 else {
            throw TrustError(.keyNotP256, "ES256 needs an EC P-256 public key")
        }
        self.publicKey = publicKey
    }

    public func verify(_ token: String) throws(TrustError) -> KeyVerifiedJWS {
        let jws = try CompactJWS(token)
        _ = try jws.es256Header()
        try jws.verifyES256Signature(with: publicKey, signer: "the given key")
        _ = try CompactJWS.decodeObject(JSONObject.self, from: jws.payload, part: "payload")
        // `es256Header()` decoded the same segment, so this cannot fail.
        let header = Base64URL.decode(bytes: jws.headerSegment) ?? []
        return KeyVerifiedJWS(jws: token, headerJSON: header, payloadJSON: jws.payload)
    }

    /// Any JSON object; `decodeObject` has already refused anything else.
    private struct JSONObject: Decodable {}
}

/// A compact JWS whose ES256 signature a `PublicKeyJWSVerifier` checked, with its header and
/// payload exactly as signed. Only the trust module creates one.
/// - Note: Immutable value; `Sendable`.
public struct KeyVerifiedJWS: Sendable {
    /// The compact JWS exactly as received.
    public let jws: String
    /// The protected header's JSON text (a JSON object without repeated keys).
    public let headerJSON: [UInt8]
    /// The payload's JSON text (a JSON object without repeated keys).
    public let payloadJSON: [UInt8]

    init(jws: String, headerJSON: [UInt8], payloadJSON: [UInt8]) {
        self.jws = jws
        self.headerJSON = headerJSON
        self.payloadJSON = payloadJSON
    }

    /// The payload as `T`; a field of the wrong type is `format.payloadSchema`, naming the field.
    public func payload<T: Decodable>(as type: T.Type) throws(TrustError) -> T {
        try CompactJWS.decodeObject(T.self, from: payloadJSON, part: "payload")
    }
}
