import AppStoreModels
import SecretSealing
import Storage

/// The secrets Storekeeper keeps in the database, and their sealing at rest: an app's shared
/// secret (`AppRecord.sharedSecret`), its App Store Connect private key
/// (`appStoreConnect.privateKeyPEM` in `AppRecord.settings`) and each webhook endpoint's
/// signing secret (`WebhookEndpoint.secret`). API keys are not here: only their hashes are
/// stored.
///
/// Storage keeps these fields as opaque text; this type seals them before a record is saved
/// and opens them when a runtime or the webhook worker needs them, each bound to its app,
/// endpoint and field (`SecretBinding`). A field that does not start with `sk1:` is a value
/// stored in clear before sealing existed: it is read as it is until the next start with a
/// key seals it (`StoredSecrets+Database.swift`).
///
/// Without a key (`sealer == nil`), clear values still work, sealed ones cannot be opened and
/// nothing new can be sealed (`keyMissing`): the server never writes a secret in clear.
/// - Note: Immutable value; `Sendable`.
public struct StoredSecrets: Sendable {
    public let sealer: SecretSealer?

    public init(sealer: SecretSealer?) {
        self.sealer = sealer
    }

    /// No key configured.
    public static let keyless = StoredSecrets(sealer: nil)

    public static func sharedSecret(appId: String) -> SecretBinding {
        SecretBinding("apps", appId, "sharedSecret")
    }

    public static func privateKey(appId: String) -> SecretBinding {
        SecretBinding("apps", appId, "appStoreConnect.privateKeyPEM")
    }

    public static func webhookSecret(appId: String, endpointId: String) -> SecretBinding {
        SecretBinding("apps", appId, "webhooks", endpointId, "secret")
    }

    // MARK: Records

    /// `app` with every secret sealed under the current key: clear values sealed, values
    /// under an older key of the sealer opened and sealed again, values under the current key
    /// kept as they are.
    public func sealed(_ app: AppRecord) throws(SecretsError) -> AppRecord {
        try transformed(app) { text, binding throws(SecretsError) in try seal(text, binding) }
    }

    /// `app` with its secrets in clear, for the runtime: never save the result.
    public func opened(_ app: AppRecord) throws(SecretsError) -> AppRecord {
        try transformed(app) { text, binding throws(SecretsError) in try open(text, binding) }
    }

    public func sealed(_ endpoint: WebhookEndpoint) throws(SecretsError) -> WebhookEndpoint {
        var copy = endpoint
        copy.secret = try seal(endpoint.secret, Self.webhookSecret(appId: endpoint.appId, endpointId: endpoint.id))
        return copy
    }

    /// The endpoint's signing secret in clear.
    public func signingSecret(of endpoint: WebhookEndpoint) throws(SecretsError) -> String {
        try open(endpoint.secret, Self.webhookSecret(appId: endpoint.appId, endpointId: endpoint.id))
    }

    /// Every secret field of the app as stored, with its binding.
    static func fields(of app: AppRecord) -> [(binding: SecretBinding, stored: String)] {
        var fields: [(SecretBinding, String)] = []
        if let secret = app.sharedSecret { fields.append((sharedSecret(appId: app.id), secret)) }
        if let pem = privateKeyPEM(in: app.settings) { fields.append((privateKey(appId: app.id), pem)) }
        return fields
    }

    // MARK: One value

    func seal(_ stored: String, _ binding: SecretBinding) throws(SecretsError) -> String {
        guard let sealer else {
            throw SecretsError(.keyMissing, "no secrets key is configured, so \(binding) cannot be stored")
        }
        guard SealedSecret.isSealed(stored) else { return try sealer.seal(stored, binding: binding) }
        let keyId: String
        do {
            keyId = try SealedSecret(parsing: stored).keyId
        } catch {
            throw SecretsError(error.code, "\(binding): \(error.message)")
        }
        if keyId == sealer.key.id { return stored }
        return try sealer.seal(try sealer.open(stored, binding: binding), binding: binding)
    }

    func open(_ stored: String, _ binding: SecretBinding) throws(SecretsError) -> String {
        guard SealedSecret.isSealed(stored) else { return stored }
        guard let sealer else {
            throw SecretsError(.keyMissing, "\(binding) is sealed and no secrets key is configured")
        }
        return try sealer.open(stored, binding: binding)
    }

    func transformed(
        _ app: AppRecord, _ transform: (String, SecretBinding) throws(SecretsError) -> String
    ) throws(SecretsError) -> AppRecord {
        var copy = app
        if let secret = app.sharedSecret { copy.sharedSecret = try transform(secret, Self.sharedSecret(appId: app.id)) }
        // The settings are edited as JSON, so keys this version does not know survive.
        if case .object(var settings) = app.settings, case .object(var connect)? = settings["appStoreConnect"],
            case .string(let pem)? = connect["privateKeyPEM"]
        {
            connect["privateKeyPEM"] = .string(try transform(pem, Self.privateKey(appId: app.id)))
            settings["appStoreConnect"] = .object(connect)
            copy.settings = .object(settings)
        }
        return copy
    }

    private static func privateKeyPEM(in settings: JSONValue) -> String? {
        guard case .object(let object) = settings, case .object(let connect)? = object["appStoreConnect"],
            case .string(let pem)? = connect["privateKeyPEM"]
        else { return nil }
        return pem
    }
}

extension StoredSecrets {
    /// Where an app's Google Play service-account key (JSON) is bound.
    public static func playServiceAccountKey(appId: String) -> SecretBinding {
        SecretBinding("apps", appId, "googlePlay.serviceAccountKey")
    }

    /// `settings` with the service-account key sealed under the current key.
    public func sealed(_ settings: PlayAppSettings) throws(SecretsError) -> PlayAppSettings {
        var copy = settings
        if let key = settings.serviceAccountKey {
            copy.serviceAccountKey = try seal(key, Self.playServiceAccountKey(appId: settings.appId))
        }
        return copy
    }

    /// `settings` with the service-account key in clear, for the Play client: never save it.
    public func opened(_ settings: PlayAppSettings) throws(SecretsError) -> PlayAppSettings {
        var copy = settings
        if let key = settings.serviceAccountKey {
            copy.serviceAccountKey = try open(key, Self.playServiceAccountKey(appId: settings.appId))
        }
        return copy
    }
}
