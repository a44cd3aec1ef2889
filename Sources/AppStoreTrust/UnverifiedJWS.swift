import AppStoreModels
import Foundation

/// A look inside a compact JWS before (or without) verifying it: which environment a payload
/// claims, so the right verifier is chosen; what a test or the demo signed. Nothing read here
/// is trusted: a value taken from it must be checked again by `SignedDataVerifier`.
///
/// One reader instead of each caller splitting on dots and decoding base64url by hand, with the
/// same size limit and part rules as verification.
/// - Note: Stateless; thread-safe.
public enum UnverifiedJWS {
    /// The decoded payload as `T`, or `nil` when the token is not a compact JWS whose payload
    /// is a JSON object of that shape.
    public static func payload<T: Decodable>(_ jws: String, as type: T.Type) -> T? {
        guard let parts = try? CompactJWS(jws) else { return nil }
        return try? JSONDecoder().decode(T.self, from: Data(parts.payload))
    }

    /// The payload's raw bytes (JSON text), or `nil` for a token that is not a compact JWS.
    public static func payloadBytes(_ jws: String) -> [UInt8]? {
        (try? CompactJWS(jws))?.payload
    }

    /// The protected header's raw bytes (JSON text), or `nil` for a token that is not a compact JWS.
    public static func headerBytes(_ jws: String) -> [UInt8]? {
        guard let parts = try? CompactJWS(jws) else { return nil }
        return Base64URL.decode(bytes: parts.headerSegment)
    }

    /// The signature's raw bytes, or `nil` for a token that is not a compact JWS.
    public static func signatureBytes(_ jws: String) -> [UInt8]? {
        (try? CompactJWS(jws))?.signature
    }

    /// The environment a transaction or renewal info claims (`environment` at the top level).
    public static func claimedEnvironment(ofTransaction jws: String) -> AppStoreEnvironment? {
        payload(jws, as: JWSTransactionDecodedPayload.self)?.environment?.value
    }

    /// The environment a V2 notification claims (in `data`, `summary` or `appData`).
    public static func claimedEnvironment(ofNotification signedPayload: String) -> AppStoreEnvironment? {
        guard let payload = payload(signedPayload, as: ResponseBodyV2DecodedPayload.self) else { return nil }
        return payload.data?.environment?.value ?? payload.summary?.environment?.value
            ?? payload.appData?.environment?.value
    }
}
