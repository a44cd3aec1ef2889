import COpenSSL
import Foundation

/// The key-encryption key that seals Storekeeper's secrets at rest: 32 random bytes, named by
/// `id`, a short hash of the key (never the key itself), which is written beside every value
/// sealed with it so that a wrong key is recognised before anything is decrypted.
///
/// `description` shows only the id, so a key printed by mistake reveals nothing.
/// - Note: Immutable value; `Sendable`.
public struct SecretsKey: Sendable, CustomStringConvertible {
    public static let byteCount = 32
    /// Longer text is refused before it is decoded: a key is 44 (base64) or 64 (hex) characters.
    static let maximumEncodedLength = 256

    /// 16 lowercase hex digits: the first 8 bytes of SHA-256 over a label and the key.
    public let id: String
    let bytes: [UInt8]

    public init(bytes: [UInt8]) throws(SecretsError) {
        guard bytes.count == Self.byteCount else {
            throw SecretsError(
                .keyInvalid, "a secrets key must be \(Self.byteCount) bytes; this one is \(bytes.count) bytes")
        }
        self.bytes = bytes
        self.id = Self.identifier(of: bytes)
    }

    /// A key written as the base64 (44 characters) or hex (64 characters) of 32 bytes;
    /// surrounding whitespace is ignored. `source` names where it came from in the error.
    public init(encoded text: String, source: String) throws(SecretsError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let expected = "must be the base64 (44 characters) or hex (64 characters) of \(Self.byteCount) random bytes"
        guard trimmed.utf8.count <= Self.maximumEncodedLength else {
            throw SecretsError(.keyInvalid, "\(source) \(expected); it is \(trimmed.utf8.count) characters long")
        }
        if trimmed.utf8.count == 2 * Self.byteCount, let bytes = Self.hexBytes(trimmed) {
            try self.init(bytes: bytes)
            return
        }
        guard let data = Data(base64Encoded: trimmed) else {
            throw SecretsError(.keyInvalid, "\(source) \(expected); it is neither")
        }
        guard data.count == Self.byteCount else {
            throw SecretsError(.keyInvalid, "\(source) \(expected); it decodes to \(data.count) bytes")
        }
        try self.init(bytes: Array(data))
    }

    /// 32 bytes from OpenSSL's CSPRNG.
    public static func generate() throws(SecretsError) -> SecretsKey {
        try SecretsKey(bytes: try RandomBytes.make(byteCount))
    }

    /// The key as base64, the form written to key files.
    public var base64: String { Data(bytes).base64EncodedString() }

    public var description: String { "SecretsKey(id: \(id))" }

    static func identifier(of key: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let input = Array("storekeeper secrets key id\u{0}".utf8) + key
        input.withUnsafeBufferPointer { buffer in _ = SHA256(buffer.baseAddress, buffer.count, &digest) }
        return digest.prefix(8).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined()
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        for character in text.utf8 {
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil ? bytes : nil
    }
}

/// Bytes from OpenSSL's CSPRNG (`RAND_bytes`), for keys and nonces.
enum RandomBytes {
    static func make(_ count: Int) throws(SecretsError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&bytes, Int32(count)) == 1 else {
            throw SecretsError(.cryptoFailed, "OpenSSL could not produce random bytes")
        }
        return bytes
    }
}
