import COpenSSL

/// A public key read from a certificate or PEM; verifies ES256 signatures when it is P-256.
///
/// - Note: `EVP_PKEY` is reference counted and, once built, only read by verification, which
///   OpenSSL 3 allows from many threads at once (`@unchecked Sendable`).
public final class PublicKey: @unchecked Sendable {
    let handle: OpaquePointer
    /// A verification context initialised once; each verification works on a duplicate, which
    /// skips OpenSSL 3's per-call algorithm fetch (the dominant cost after the curve math).
    /// The template is never used directly, only read by `EVP_PKEY_CTX_dup`.
    private let verifyTemplate: OpaquePointer?

    init(owning handle: OpaquePointer) {
        self.handle = handle
        let template = EVP_PKEY_CTX_new_from_pkey(nil, handle, nil)
        if let template, EVP_PKEY_verify_init(template) == 1 {
            verifyTemplate = template
        } else {
            EVP_PKEY_CTX_free(template)
            OpenSSLFailure.clear()
            verifyTemplate = nil
        }
    }

    deinit {
        EVP_PKEY_CTX_free(verifyTemplate)
        EVP_PKEY_free(handle)
    }

    /// Reads a SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
    public convenience init(pem: String) throws(TrustError) {
        let key: OpaquePointer? =
            withMemoryBIO(Array(pem.utf8)) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) } ?? nil
        guard let key else {
            OpenSSLFailure.clear()
            throw TrustError(.keyMalformed, "not a PEM public key")
        }
        self.init(owning: key)
    }

    /// Whether this is an EC key on NIST P-256 (prime256v1), the only curve ES256 allows.
    public var isP256: Bool {
        guard EVP_PKEY_get_base_id(handle) == EVP_PKEY_EC else { return false }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(handle, &name, name.count, &length) == 1 else { return false }
        return string(fromNulTerminated: name) == "prime256v1"
    }

    /// SubjectPublicKeyInfo PEM, as Apple's Python library returns it from chain verification.
    public var pem: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        PEM_write_bio_PUBKEY(bio, handle)
        return String(decoding: memoryBIOContents(bio), as: UTF8.self)
    }

    /// Verifies an ES256 signature in JOSE form (64 bytes: r || s, each 32 bytes big-endian).
    public func verifyES256(signature raw: [UInt8], message: some Collection<UInt8>) -> Bool {
        guard raw.count == 64, let der = ECDSASignature.derFromRaw(raw) else { return false }
        guard let verifyTemplate, let context = EVP_PKEY_CTX_dup(verifyTemplate) else {
            return verify(derSignature: der, message: message)
        }
        defer { EVP_PKEY_CTX_free(context) }
        let digest = Digest.sha256(message)
        let result = der.withUnsafeBufferPointer { signature in
            digest.withUnsafeBufferPointer {
                EVP_PKEY_verify(context, signature.baseAddress, signature.count, $0.baseAddress, $0.count)
            }
        }
        if result != 1 { OpenSSLFailure.clear() }
        return result == 1
    }

    /// Verifies a DER ECDSA signature with SHA-256 (promotional offer v1 signatures).
    public func verify(derSignature der: [UInt8], message: some Collection<UInt8>) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit_ex(context, nil, "SHA256", nil, nil, handle, nil) == 1 else {
            OpenSSLFailure.clear()
            return false
        }
        let bytes = Array(message)
        let result = bytes.withUnsafeBufferPointer { messageBuffer in
            der.withUnsafeBufferPointer { signatureBuffer in
                EVP_DigestVerify(
                    context, signatureBuffer.baseAddress, signatureBuffer.count,
                    messageBuffer.baseAddress, messageBuffer.count)
            }
        }
        if result != 1 { OpenSSLFailure.clear() }
        return result == 1
    }
}

/// Conversion between the DER ECDSA-Sig-Value OpenSSL speaks and JOSE's fixed r || s form.
enum ECDSASignature {
    static func derFromRaw(_ raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s else { BN_free(r); BN_free(s); return nil }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else { BN_free(r); BN_free(s); return nil }
        return derEncode { i2d_ECDSA_SIG(signature, $0) }
    }

    static func rawFromDER(_ der: [UInt8]) -> [UInt8]? {
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature else { return nil }
        defer { ECDSA_SIG_free(signature) }
        var raw = [UInt8](repeating: 0, count: 64)
        let ok = raw.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(ECDSA_SIG_get0_r(signature), buffer.baseAddress, 32) == 32
                && BN_bn2binpad(ECDSA_SIG_get0_s(signature), buffer.baseAddress! + 32, 32) == 32
        }
        return ok ? raw : nil
    }
}
