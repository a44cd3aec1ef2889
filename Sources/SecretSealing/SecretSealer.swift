/// Seals secrets for storage and opens them again: AES-256-GCM under `key`, a fresh random
/// 96-bit nonce per value, the value's `SecretBinding` as associated data. Opening accepts
/// values sealed under `key` or any of the older keys it was given (what rotation needs);
/// a value sealed under any other key is refused as `unknownKey` before decrypting, and one
/// whose tag does not match (altered, or moved between fields) as `authenticationFailed`.
/// - Note: Immutable value; `Sendable`.
public struct SecretSealer: Sendable {
    /// Secrets larger than this are refused (a P-256 PEM key is about 250 bytes).
    public static let maximumSecretLength = 64 * 1024

    /// The key new seals use.
    public let key: SecretsKey
    private let openingKeys: [String: SecretsKey]

    public init(key: SecretsKey, alsoOpening olderKeys: [SecretsKey] = []) {
        self.key = key
        var keys: [String: SecretsKey] = [:]
        for older in olderKeys { keys[older.id] = older }
        keys[key.id] = key
        openingKeys = keys
    }

    /// Ids of every key this sealer opens with.
    public var keyIds: Set<String> { Set(openingKeys.keys) }

    public func seal(_ secret: String, binding: SecretBinding) throws(SecretsError) -> String {
        let plaintext = Array(secret.utf8)
        guard plaintext.count <= Self.maximumSecretLength else {
            throw SecretsError(.tooLarge, "\(binding) is longer than \(Self.maximumSecretLength) bytes")
        }
        let nonce = try RandomBytes.make(SealedSecret.nonceCount)
        let (ciphertext, tag) = try AESGCM.seal(
            key: key.bytes, nonce: nonce, plaintext: plaintext, associatedData: binding.associatedData(keyId: key.id))
        return SealedSecret(keyId: key.id, nonce: nonce, ciphertext: ciphertext, tag: tag).text
    }

    public func open(_ stored: String, binding: SecretBinding) throws(SecretsError) -> String {
        let sealed: SealedSecret
        do {
            sealed = try SealedSecret(parsing: stored)
        } catch {
            throw SecretsError(error.code, "\(binding): \(error.message)")
        }
        guard let key = openingKeys[sealed.keyId] else {
            let known = openingKeys.keys.sorted().joined(separator: ", ")
            throw SecretsError(
                .unknownKey,
                "\(binding) is sealed under key \(sealed.keyId), which is not the configured key (\(known))")
        }
        let opened = try AESGCM.open(
            key: key.bytes, nonce: sealed.nonce, ciphertext: sealed.ciphertext, tag: sealed.tag,
            associatedData: binding.associatedData(keyId: sealed.keyId))
        guard let opened else {
            throw SecretsError(
                .authenticationFailed,
                "\(binding) failed authentication under key \(sealed.keyId): it was altered or belongs to another field"
            )
        }
        guard let text = String(validating: opened, as: UTF8.self) else {
            throw SecretsError(.malformed, "\(binding) does not open to UTF-8 text")
        }
        return text
    }
}
