import AppStoreTrust
import COpenSSL
import Foundation

/// An RSA private key that signs RS256: a service account's key, or a key the Play simulator
/// generated for its OIDC tokens.
///
/// - Note: Signing with an `EVP_PKEY` from several threads is safe in OpenSSL 3 (each call makes
///   its own `EVP_MD_CTX`); the key itself is never mutated (`@unchecked Sendable`). The type has no
///   description that could print the key.
public final class RSAPrivateKey: @unchecked Sendable, CustomStringConvertible {
    let handle: OpaquePointer

    init(owning handle: OpaquePointer) { self.handle = handle }
    deinit { EVP_PKEY_free(handle) }

    /// Generates a fresh RSA key (2048 bits unless asked otherwise; smaller sizes exist only so
    /// tests can prove they are refused).
    public static func generate(bits: UInt32 = 2048) throws(GooglePlayTrustError) -> RSAPrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw GooglePlayTrustError(.signingFailed, "OpenSSL cannot create an RSA key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else {
            throw GooglePlayTrustError(.signingFailed, "RSA key generation failed: \(OpenSSLFailure.drain())")
        }
        return RSAPrivateKey(owning: key)
    }

    /// Reads a PEM private key (PKCS#8 `BEGIN PRIVATE KEY`, as Google issues, or PKCS#1
    /// `BEGIN RSA PRIVATE KEY`). Only RSA keys of at least 2048 bits are accepted.
    public convenience init(pem: String) throws(GooglePlayTrustError) {
        let key: OpaquePointer? =
            withMemoryBIO(Array(pem.utf8)) { bio in PEM_read_bio_PrivateKey(bio, nil, nil, nil) } ?? nil
        guard let key else {
            ERR_clear_error()
            throw GooglePlayTrustError(.keyMalformed, "not a PEM private key")
        }
        self.init(owning: key)
        guard EVP_PKEY_is_a(handle, "RSA") == 1 else {
            throw GooglePlayTrustError(.keyNotRSA, "private key is not RSA")
        }
        let bits = EVP_PKEY_get_bits(handle)
        guard bits >= RSAPublicKey.minimumBits else {
            throw GooglePlayTrustError(
                .keyTooSmall, "RSA key of \(bits) bits; at least \(RSAPublicKey.minimumBits) required")
        }
    }

    /// PKCS#8 PEM (`BEGIN PRIVATE KEY`), the form of a service-account key file's `private_key`.
    public var pkcs8PEM: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        PEM_write_bio_PrivateKey(bio, handle, nil, nil, 0, nil, nil)
        return String(decoding: memoryBIOContents(bio), as: UTF8.self)
    }

    public var publicKey: RSAPublicKey {
        // EVP_PKEY_up_ref shares the key object; verification only reads its public half.
        EVP_PKEY_up_ref(handle)
        return RSAPublicKey(owning: handle)
    }

    public var description: String { "RSAPrivateKey(\(EVP_PKEY_get_bits(handle)) bits)" }

    /// RSASSA-PKCS1-v1_5 with SHA-256 over `message`.
    public func signRS256(_ message: some Collection<UInt8>) throws(GooglePlayTrustError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw GooglePlayTrustError(.signingFailed, "no digest context") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, handle) == 1 else {
            throw GooglePlayTrustError(.signingFailed, "signing init failed: \(OpenSSLFailure.drain())")
        }
        let bytes = Array(message)
        var length = 0
        guard bytes.withUnsafeBufferPointer({ EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }) == 1
        else {
            throw GooglePlayTrustError(.signingFailed, "signing failed: \(OpenSSLFailure.drain())")
        }
        var signature = [UInt8](repeating: 0, count: length)
        let ok = bytes.withUnsafeBufferPointer { messageBuffer in
            signature.withUnsafeMutableBufferPointer {
                EVP_DigestSign(context, $0.baseAddress, &length, messageBuffer.baseAddress, messageBuffer.count)
            }
        }
        guard ok == 1 else { throw GooglePlayTrustError(.signingFailed, "signing failed: \(OpenSSLFailure.drain())") }
        return Array(signature.prefix(length))
    }
}
