/// The single error type of the secret-sealing module: a stable code and a message that names
/// keys by their id and secrets by what they are (`apps/demo/sharedSecret`), never a key or a
/// secret value.
/// - Note: Immutable value; `Sendable`.
public struct SecretsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable codes for logs and exit messages; never rename one.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Sealed secrets exist (or one must be sealed) and no secrets key is configured.
        case keyMissing = "secrets.keyMissing"
        /// A key that is not the base64 or hex of 32 bytes.
        case keyInvalid = "secrets.keyInvalid"
        case keyFileUnreadable = "secrets.keyFileUnreadable"
        /// A key file other users may read (or write).
        case keyFileInsecure = "secrets.keyFileInsecure"
        /// A new key file would overwrite an existing one.
        case keyFileExists = "secrets.keyFileExists"
        /// Sealed under a key this process does not hold: the wrong key is configured.
        case unknownKey = "secrets.unknownKey"
        /// Not in the `sk1:<keyId>:<base64>` shape.
        case malformed = "secrets.malformed"
        /// The AES-GCM tag does not match: the value was altered, or moved from another field.
        case authenticationFailed = "secrets.authenticationFailed"
        case tooLarge = "secrets.tooLarge"
        /// OpenSSL could not seal (no randomness, cipher unavailable).
        case cryptoFailed = "secrets.cryptoFailed"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
