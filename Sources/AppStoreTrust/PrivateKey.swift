import COpenSSL
import Foundation

/// A P-256 private key: an App Store Connect `.p8` key, or a key of a test CA.
///
/// - Note: Signing with an `EVP_PKEY` from several threads is safe in OpenSSL 3 (each call
///   makes its own `EVP_MD_CTX`); the key itself is never mutated (`@unchecked Sendable`).
public final class PrivateKey: @unchecked Sendable {
    let handle: OpaquePointer

    init(owning handle: OpaquePointer) { self.handle = handle }
    deinit { EVP_PKEY_free(handle) }

    /// Generates a fresh P-256 key.
    public static func generateP256() throws(TrustError) -> PrivateKey { try generateEC(curve: "prime256v1") }

    /// Generates an EC key on a named OpenSSL curve; other curves than P-256 exist only so
    /// tests can prove they are refused.
    public static func generateEC(curve: String) throws(TrustError) -> PrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw TrustError(.keyMalformed, "OpenSSL cannot create an EC key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
            EVP_PKEY_CTX_set_group_name(context, curve) == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else {
            throw TrustError(.keyMalformed, "P-256 key generation failed: \(OpenSSLFailure.drain())")
        }
        return PrivateKey(owning: key)
    }

    /// Reads a PEM private key (PKCS#8 `BEGIN PRIVATE KEY`, as App Store Connect issues, or
    /// SEC1 `BEGIN EC PRIVATE KEY`). Only P-256 keys are accepted.
    public convenience init(pem: String) throws(TrustError) {
        let key: OpaquePointer? =
            withMemoryBIO(Array(pem.utf8)) { bio in PEM_read_bio_PrivateKey(bio, nil, nil, nil) } ?? nil
        guard let key else {
            OpenSSLFailure.clear()
            throw TrustError(.keyMalformed, "not a PEM private key")
        }
        self.init(owning: key)
        guard publicKey.isP256 else { throw TrustError(.keyNotP256, "private key is not on curve P-256") }
    }

    public convenience init(contentsOf url: URL) throws(TrustError) {
        guard let data = try? Data(contentsOf: url), let text = String(data: data, encoding: .utf8) else {
            throw TrustError(.keyMalformed, "cannot read key file \(url.path)")
        }
        try self.init(pem: text)
    }

    /// PKCS#8 PEM, the `.p8` format.
    public var pkcs8PEM: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        PEM_write_bio_PrivateKey(bio, handle, nil, nil, 0, nil, nil)
        return String(decoding: memoryBIOContents(bio), as: UTF8.self)
    }

    public var publicKey: PublicKey {
        // EVP_PKEY_up_ref shares the key object; verification only needs its public half.
        EVP_PKEY_up_ref(handle)
        return PublicKey(owning: handle)
    }

    /// ECDSA P-256 with SHA-256, DER-encoded signature (promotional offer v1 format).
    public func signDER(_ message: some Collection<UInt8>) throws(TrustError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw TrustError(.signingFailed, "no digest context") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, handle) == 1 else {
            throw TrustError(.signingFailed, "signing init failed: \(OpenSSLFailure.drain())")
        }
        let bytes = Array(message)
        var length = 0
        guard bytes.withUnsafeBufferPointer({ EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }) == 1
        else {
            throw TrustError(.signingFailed, "signing failed: \(OpenSSLFailure.drain())")
        }
        var signature = [UInt8](repeating: 0, count: length)
        let ok = bytes.withUnsafeBufferPointer { messageBuffer in
            signature.withUnsafeMutableBufferPointer {
                EVP_DigestSign(context, $0.baseAddress, &length, messageBuffer.baseAddress, messageBuffer.count)
            }
        }
        guard ok == 1 else { throw TrustError(.signingFailed, "signing failed: \(OpenSSLFailure.drain())") }
        return Array(signature.prefix(length))
    }

    /// ES256 signature in JOSE form (r || s, 64 bytes).
    public func signES256(_ message: some Collection<UInt8>) throws(TrustError) -> [UInt8] {
        guard let raw = ECDSASignature.rawFromDER(try signDER(message)) else {
            throw TrustError(.signingFailed, "cannot convert ECDSA signature to JOSE form")
        }
        return raw
    }
}
