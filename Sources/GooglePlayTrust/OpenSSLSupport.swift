import AppStoreTrust
import COpenSSL

/// OpenSSL helpers Google Play's RSA keys need beyond AppStoreTrust's shared ones
/// (`OpenSSLFailure`, `withMemoryBIO`, `memoryBIOContents`).
enum PlayOpenSSL {
    /// The big-endian bytes of a BIGNUM parameter (`"n"`, `"e"`) of a key.
    static func bigNumberParameter(_ key: OpaquePointer, _ name: String) -> [UInt8]? {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { return nil }
        defer { BN_free(number) }
        let length = (BN_num_bits(number) + 7) / 8
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { BN_bn2bin(number, $0.baseAddress) }
        return written == length ? bytes : nil
    }
}
