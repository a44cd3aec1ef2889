import COpenSSL
import Foundation

/// SHA-256 and HMAC-SHA256 through OpenSSL.
public enum Digest {
    /// SHA-256 as OpenSSL's provider gives it, fetched once. The one-shot `SHA256()`, like any
    /// digest begun with `EVP_sha256()`, fetches the implementation by name at every call (a
    /// lock, a table lookup, an allocation): ~0.35 µs, more than hashing an API key, and two ran
    /// on every authenticated GET (the key's hash, the ETag): 6% of the server's profile at
    /// 100,000 customers. `nil` only if the default provider lacks SHA-256, which no OpenSSL 3
    /// build does; `SHA256()` is then tried, and fails alike.
    private static let sha256Algorithm = FetchedDigestAlgorithm(name: "SHA256")

    public static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        // Hash in place when the bytes are contiguous (arrays, slices): no copy on the hot path.
        let hashed: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            sha256(buffer, into: &output)
        }
        if hashed == nil {
            let input = Array(bytes)
            input.withUnsafeBufferPointer { buffer in sha256(buffer, into: &output) }
        }
        return output
    }

    private static func sha256(_ buffer: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        // A failure would leave 32 zero bytes standing as the hash: it cannot happen with a
        // fetched SHA-256 short of memory exhaustion, and then no answer is better than that one.
        if let algorithm = sha256Algorithm?.handle {
            precondition(EVP_Digest(buffer.baseAddress, buffer.count, &output, nil, algorithm, nil) == 1)
        } else {
            precondition(SHA256(buffer.baseAddress, buffer.count, &output) != nil)
        }
    }

    public static func sha1(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 20)
        let input = Array(bytes)
        input.withUnsafeBufferPointer { buffer in
            _ = SHA1(buffer.baseAddress, buffer.count, &output)
        }
        return output
    }

    public static func hmacSHA256(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var outputLength: UInt32 = 32
        let keyBytes = Array(key)
        let messageBytes = Array(message)
        keyBytes.withUnsafeBufferPointer { keyBuffer in
            messageBytes.withUnsafeBufferPointer { messageBuffer in
                _ = HMAC(
                    EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count),
                    messageBuffer.baseAddress, messageBuffer.count, &output, &outputLength)
            }
        }
        return output
    }

    /// Compares secrets in time independent of where they differ (CRYPTO_memcmp).
    public static func constantTimeEqual(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        let left = Array(lhs), right = Array(rhs)
        guard left.count == right.count else { return false }
        if left.isEmpty { return true }
        return left.withUnsafeBytes { l in
            right.withUnsafeBytes { r in CRYPTO_memcmp(l.baseAddress, r.baseAddress, left.count) == 0 }
        }
    }

    /// Lowercase hex. Written out by hand: it runs on every authenticated request (the key's
    /// hash) and every ETag, where `String(format:)` per byte cost more than the rest of a GET.
    /// Contiguous bytes (arrays, their slices) are read through one buffer: called from other
    /// modules this function is not specialized, and iterating a generic collection byte by
    /// byte through its witness table cost 3% of a GET.
    public static func hex(_ bytes: some Collection<UInt8>) -> String {
        if let text = bytes.withContiguousStorageIfAvailable({ hex(buffer: $0) }) { return text }
        return Array(bytes).withUnsafeBufferPointer { hex(buffer: $0) }
    }

    private static func hex(buffer bytes: UnsafeBufferPointer<UInt8>) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            digits.withUTF8Buffer { table in
                var index = 0
                for byte in bytes {
                    buffer[index] = table[Int(byte >> 4)]
                    buffer[index + 1] = table[Int(byte & 0x0F)]
                    index += 2
                }
            }
            return bytes.count * 2
        }
    }
}

/// A digest algorithm fetched from OpenSSL's default provider, kept for the process.
/// - Note: `@unchecked Sendable`: the handle is set once and never changed; OpenSSL documents a
///   fetched `EVP_MD` as immutable and safe to use from many threads at once. Never freed (a
///   process-long constant).
final class FetchedDigestAlgorithm: @unchecked Sendable {
    let handle: OpaquePointer

    init?(name: String) {
        guard let handle = EVP_MD_fetch(nil, name, nil) else { return nil }
        self.handle = handle
    }
}
