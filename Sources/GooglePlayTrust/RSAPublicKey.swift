import AppStoreTrust
import COpenSSL
import Foundation

/// An RSA public key that verifies RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signatures: one of
/// Google's published signing keys, or the public half of a service-account key.
///
/// - Note: Verifying with an `EVP_PKEY` from several threads is safe in OpenSSL 3 (each call makes
///   its own `EVP_MD_CTX`); the key itself is never mutated (`@unchecked Sendable`).
public final class RSAPublicKey: @unchecked Sendable {
    /// Google's keys and service-account keys are 2048-bit; shorter ones are refused.
    public static let minimumBits: Int32 = 2048
    /// 16384 bits bounds the cost of one verification an attacker can make us do.
    public static let maximumBits: Int32 = 16384

    let handle: OpaquePointer

    /// OpenSSL's parameter names of an RSA modulus and exponent (`OSSL_PKEY_PARAM_RSA_N`, `_E`).
    private static var parameterN: UnsafePointer<CChar> { cString("n") }
    private static var parameterE: UnsafePointer<CChar> { cString("e") }

    /// A C view of a string literal: static storage that lives as long as the process.
    private static func cString(_ literal: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(literal.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    init(owning handle: OpaquePointer) { self.handle = handle }
    deinit { EVP_PKEY_free(handle) }

    /// The key of a JWK's `n` (modulus) and `e` (exponent), both unpadded base64url big-endian.
    public convenience init(modulus: [UInt8], exponent: [UInt8]) throws(GooglePlayTrustError) {
        guard !modulus.isEmpty, !exponent.isEmpty, exponent.count <= 8, modulus.count <= Int(Self.maximumBits / 8)
        else {
            throw GooglePlayTrustError(.keyMalformed, "RSA modulus or exponent has an impossible length")
        }
        guard let builder = OSSL_PARAM_BLD_new() else { throw GooglePlayTrustError(.keyMalformed, "no param builder") }
        defer { OSSL_PARAM_BLD_free(builder) }
        let n = modulus.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let e = exponent.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        defer {
            BN_free(n)
            BN_free(e)
        }
        // The builder keeps the name pointers until `to_param`: they must outlive the push calls,
        // so they point at static strings, never at a temporary bridged Swift string.
        guard let n, let e, OSSL_PARAM_BLD_push_BN(builder, Self.parameterN, n) == 1,
            OSSL_PARAM_BLD_push_BN(builder, Self.parameterE, e) == 1,
            let parameters = OSSL_PARAM_BLD_to_param(builder)
        else {
            throw GooglePlayTrustError(.keyMalformed, "cannot build RSA parameters: \(OpenSSLFailure.drain())")
        }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw GooglePlayTrustError(.keyMalformed, "OpenSSL cannot create an RSA context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
            EVP_PKEY_fromdata(context, &key, COpenSSL_EVP_PKEY_PUBLIC_KEY(), parameters) == 1, let key
        else {
            throw GooglePlayTrustError(.keyMalformed, "OpenSSL refused the RSA key: \(OpenSSLFailure.drain())")
        }
        self.init(owning: key)
        try checkSize()
    }

    /// A PEM `BEGIN PUBLIC KEY` (SubjectPublicKeyInfo) RSA key.
    public convenience init(pem: String) throws(GooglePlayTrustError) {
        let key: OpaquePointer? =
            withMemoryBIO(Array(pem.utf8)) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) } ?? nil
        guard let key else {
            ERR_clear_error()
            throw GooglePlayTrustError(.keyMalformed, "not a PEM public key")
        }
        self.init(owning: key)
        guard EVP_PKEY_is_a(handle, "RSA") == 1 else { throw GooglePlayTrustError(.keyNotRSA, "public key is not RSA") }
        try checkSize()
    }

    private func checkSize() throws(GooglePlayTrustError) {
        let bits = EVP_PKEY_get_bits(handle)
        guard bits >= Self.minimumBits else {
            throw GooglePlayTrustError(.keyTooSmall, "RSA key of \(bits) bits; at least \(Self.minimumBits) required")
        }
        guard bits <= Self.maximumBits else {
            throw GooglePlayTrustError(.keyMalformed, "RSA key of \(bits) bits; at most \(Self.maximumBits) accepted")
        }
    }

    /// The key size in bits.
    public var bits: Int { Int(EVP_PKEY_get_bits(handle)) }

    /// The modulus, big-endian, no leading zero.
    public var modulus: [UInt8] { PlayOpenSSL.bigNumberParameter(handle, "n") ?? [] }
    /// The public exponent, big-endian.
    public var exponent: [UInt8] { PlayOpenSSL.bigNumberParameter(handle, "e") ?? [] }

    /// PEM SubjectPublicKeyInfo (`BEGIN PUBLIC KEY`).
    public var pem: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        PEM_write_bio_PUBKEY(bio, handle)
        return String(decoding: memoryBIOContents(bio), as: UTF8.self)
    }

    /// Whether `signature` is an RS256 signature of `message` by this key.
    public func verifyRS256(signature: some Collection<UInt8>, message: some Collection<UInt8>) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, handle) == 1 else {
            ERR_clear_error()
            return false
        }
        let signatureBytes = Array(signature)
        let messageBytes = Array(message)
        let result = signatureBytes.withUnsafeBufferPointer { signatureBuffer in
            messageBytes.withUnsafeBufferPointer { messageBuffer in
                EVP_DigestVerify(
                    context, signatureBuffer.baseAddress, signatureBuffer.count, messageBuffer.baseAddress,
                    messageBuffer.count)
            }
        }
        if result != 1 { ERR_clear_error() }
        return result == 1
    }
}
