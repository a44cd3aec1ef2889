import Foundation

/// A secret as stored: `sk1:<keyId>:<base64(nonce | ciphertext | tag)>`. `sk1` is the format
/// (AES-256-GCM, 96-bit random nonce, 128-bit tag, associated data from `SecretBinding`);
/// `keyId` names the `SecretsKey` it was sealed with.
/// - Note: Immutable value; `Sendable`.
public struct SealedSecret: Sendable, Hashable {
    static let version = "sk1"
    public static let prefix = version + ":"
    static let nonceCount = 12
    static let tagCount = 16
    /// Sealed text longer than this is refused before decoding (a sealed 64 KiB secret fits).
    public static let maximumLength = 96 * 1024

    public let keyId: String
    let nonce: [UInt8]
    let ciphertext: [UInt8]
    let tag: [UInt8]

    init(keyId: String, nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
        self.keyId = keyId
        self.nonce = nonce
        self.ciphertext = ciphertext
        self.tag = tag
    }

    /// Whether stored text is in the sealed form (it may still be malformed); anything else is
    /// a value stored in clear before sealing.
    public static func isSealed(_ text: String) -> Bool { text.hasPrefix(prefix) }

    public init(parsing text: String) throws(SecretsError) {
        guard text.utf8.count <= Self.maximumLength else {
            throw SecretsError(.tooLarge, "a sealed secret is longer than \(Self.maximumLength) bytes")
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Self.version else {
            throw SecretsError(.malformed, "a sealed secret must read \(Self.version):<keyId>:<base64>")
        }
        let keyId = String(parts[1])
        guard keyId.utf8.count == 16,
            keyId.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else {
            throw SecretsError(.malformed, "a sealed secret's key id must be 16 lowercase hex digits")
        }
        guard let data = Data(base64Encoded: String(parts[2])), data.count >= Self.nonceCount + Self.tagCount else {
            throw SecretsError(.malformed, "a sealed secret's body is not base64 of nonce, ciphertext and tag")
        }
        let bytes = Array(data)
        self.init(
            keyId: keyId, nonce: Array(bytes.prefix(Self.nonceCount)),
            ciphertext: Array(bytes[Self.nonceCount..<(bytes.count - Self.tagCount)]),
            tag: Array(bytes.suffix(Self.tagCount)))
    }

    /// The stored form.
    public var text: String {
        Self.prefix + keyId + ":" + Data(nonce + ciphertext + tag).base64EncodedString()
    }
}
