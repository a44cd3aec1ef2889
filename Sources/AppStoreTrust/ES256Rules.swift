/// The header and signature rules of an ES256 compact JWS, whoever holds the key.
///
/// One implementation, so `SignedDataVerifier` (key from Apple's chain), `PublicKeyJWSVerifier`
/// (one known key) and `AppStoreConnectTokenVerifier` (key chosen by `kid`) refuse the same
/// token with the same rule codes.
extension CompactJWS {
    /// The protected header once it is unpadded base64url (`format.base64`) of a JSON object
    /// (`format.headerNotJSON`) that repeats no key (`format.duplicateKey`) and whose `alg` is
    /// exactly `ES256` (`alg.notES256`).
    func es256Header() throws(TrustError) -> JWSHeader {
        let header = try header()
        guard header.alg == "ES256" else {
            throw TrustError(.algorithmNotES256, "JWS alg is not ES256")
        }
        return header
    }

    /// Accepts a 64-byte r‖s signature (`signature.notRawP256`) that verifies over
    /// `header.payload` with `key` (`signature.invalid`). `signer` names the key in the refusal
    /// ("the leaf key"); it never describes the key material.
    func verifyES256Signature(with key: PublicKey, signer: String) throws(TrustError) {
        guard signature.count == 64 else {
            throw TrustError(.signatureLength, "ES256 signature is \(signature.count) bytes, expected 64 (r‖s)")
        }
        guard key.verifyES256(signature: signature, message: signingInput) else {
            throw TrustError(.signatureInvalid, "JWS signature does not verify with \(signer)")
        }
    }
}
