import SecretSealing
import StorekeeperIngestion

extension ServerConfiguration {
    /// How to configure a key, for messages that ask for one.
    public static let secretsKeyHint =
        "set STOREKEEPER_SECRETS_KEY (base64 of 32 bytes) or STOREKEEPER_SECRETS_KEY_FILE "
        + "(secretsKey / secretsKeyFile in the config file); `storekeeper secrets new-key FILE` writes one"

    /// The secrets key `secretsKey` or `secretsKeyFile` names; `nil` when neither is set.
    /// Throws when the file cannot be read, is open to other users, or holds no valid key.
    public func loadSecretsKey() throws(SecretsError) -> SecretsKey? {
        if let secretsKey { return try SecretsKey(encoded: secretsKey, source: "secretsKey") }
        if let secretsKeyFile { return try SecretsKeyFile.read(secretsKeyFile) }
        return nil
    }

    /// `StoredSecrets` sealing with the configured key (keyless when none is configured).
    public func storedSecrets() throws(SecretsError) -> StoredSecrets {
        StoredSecrets(sealer: try loadSecretsKey().map { SecretSealer(key: $0) })
    }
}
