import AppStoreModels
import SecretSealing
import Storage

/// What the database holds in each secret field: values in clear, values sealed under each key
/// id, and values in the sealed form that cannot be parsed. Names fields, never values.
/// - Note: Immutable value; `Sendable`.
public struct StoredSecretsInventory: Sendable, Hashable {
    public var clear: [SecretBinding] = []
    /// Key id → the fields sealed under it.
    public var sealed: [String: [SecretBinding]] = [:]
    public var malformed: [SecretBinding] = []

    public init(reading reader: any StoreReader) throws {
        for app in try reader.apps() {
            for field in StoredSecrets.fields(of: app) { add(field.stored, field.binding) }
            if let key = try reader.playAppSettings(appId: app.id)?.serviceAccountKey {
                add(key, StoredSecrets.playServiceAccountKey(appId: app.id))
            }
            for endpoint in try reader.webhookEndpoints(appId: app.id) {
                add(endpoint.secret, StoredSecrets.webhookSecret(appId: endpoint.appId, endpointId: endpoint.id))
            }
        }
    }

    public var sealedCount: Int { sealed.values.reduce(0) { $0 + $1.count } }

    private mutating func add(_ stored: String, _ binding: SecretBinding) {
        guard SealedSecret.isSealed(stored) else {
            clear.append(binding)
            return
        }
        guard let parsed = try? SealedSecret(parsing: stored) else {
            malformed.append(binding)
            return
        }
        sealed[parsed.keyId, default: []].append(binding)
    }
}

extension StoredSecrets {
    /// What `prepare` found and did at startup.
    /// - Note: Immutable value; `Sendable`.
    public struct Preparation: Sendable, Hashable {
        /// Clear values sealed now (existing databases: the first start with a key).
        public var sealedNow: Int
        /// Clear values left in clear because no key is configured.
        public var clearWithoutKey: Int
        /// Values under the configured key that do not open (altered, moved, malformed): their
        /// apps answer `app_not_configured` until the secret is set again.
        public var unreadable: [SecretBinding]

        public init(sealedNow: Int, clearWithoutKey: Int, unreadable: [SecretBinding]) {
            self.sealedNow = sealedNow
            self.clearWithoutKey = clearWithoutKey
            self.unreadable = unreadable
        }
    }

    /// The startup check, before serving. Throws `keyMissing` when sealed values exist and no
    /// key is configured, and `unknownKey` when values are sealed under a key the sealer does
    /// not hold (the wrong key): the server must not start. Otherwise opens every sealed value
    /// once (reporting those that fail) and seals the clear ones in one transaction.
    public func prepare(_ store: any Store, at now: Timestamp) async throws -> Preparation {
        let check = self
        let (inventory, unreadable) = try await store.read { reader in
            let inventory = try StoredSecretsInventory(reading: reader)
            var unreadable = inventory.malformed
            if check.sealer != nil {
                for app in try reader.apps() {
                    for field in Self.fields(of: app) where (try? check.open(field.stored, field.binding)) == nil {
                        unreadable.append(field.binding)
                    }
                    if let play = try reader.playAppSettings(appId: app.id), (try? check.opened(play)) == nil {
                        unreadable.append(Self.playServiceAccountKey(appId: app.id))
                    }
                    for endpoint in try reader.webhookEndpoints(appId: app.id)
                    where (try? check.signingSecret(of: endpoint)) == nil {
                        unreadable.append(Self.webhookSecret(appId: endpoint.appId, endpointId: endpoint.id))
                    }
                }
            }
            return (inventory, unreadable)
        }
        let keyIds = inventory.sealed.keys.sorted()
        guard let sealer else {
            if inventory.sealedCount > 0 {
                throw SecretsError(
                    .keyMissing,
                    "the database holds \(inventory.sealedCount) sealed secrets (key \(keyIds.joined(separator: ", "))) "
                        + "and no secrets key is configured")
            }
            return Preparation(sealedNow: 0, clearWithoutKey: inventory.clear.count, unreadable: inventory.malformed)
        }
        let unknown = keyIds.filter { !sealer.keyIds.contains($0) }
        if !unknown.isEmpty {
            let count = unknown.reduce(0) { $0 + (inventory.sealed[$1]?.count ?? 0) }
            throw SecretsError(
                .unknownKey,
                "the database holds \(count) secrets sealed under key \(unknown.joined(separator: ", ")), "
                    + "which is not the configured key (\(sealer.key.id))")
        }
        let sealedNow = inventory.clear.isEmpty ? 0 : try await resealAll(store, at: now)
        return Preparation(sealedNow: sealedNow, clearWithoutKey: 0, unreadable: unreadable)
    }

    /// Seals, in one transaction, every value not yet under the sealer's key: clear values, and
    /// values under its older keys (rotation). Values already under the key and values that
    /// cannot be parsed are left as they are. Returns how many values were written. Throws
    /// `keyMissing` without a key, and `unknownKey` / `authenticationFailed` for a value that
    /// no key of the sealer opens (nothing is written then).
    public func resealAll(_ store: any Store, at now: Timestamp) async throws -> Int {
        guard sealer != nil else {
            throw SecretsError(.keyMissing, "no secrets key is configured, so nothing can be sealed")
        }
        let secrets = self
        return try await store.write { transaction in
            var count = 0
            let reseal = { (stored: String, binding: SecretBinding) throws(SecretsError) -> String in
                if SealedSecret.isSealed(stored) && (try? SealedSecret(parsing: stored)) == nil { return stored }
                let sealed = try secrets.seal(stored, binding)
                if sealed != stored { count += 1 }
                return sealed
            }
            // Each row is re-read under its lock: an admin write through another instance between
            // the listing and the save would otherwise be overwritten with the stale row.
            for listed in try transaction.apps() {
                guard let app = try transaction.lockApp(id: listed.id) else { continue }
                let sealed = try secrets.transformed(app, reseal)
                if sealed != app { try transaction.saveApp(sealed, at: now) }
                if let play = try transaction.playAppSettings(appId: app.id), let key = play.serviceAccountKey {
                    var copy = play
                    copy.serviceAccountKey = try reseal(key, Self.playServiceAccountKey(appId: app.id))
                    if copy != play {
                        try transaction.savePlayAppSettings(copy, environments: app.environments, at: now)
                    }
                }
                for listedEndpoint in try transaction.webhookEndpoints(appId: app.id) {
                    guard let endpoint = try transaction.lockWebhookEndpoint(id: listedEndpoint.id, appId: app.id)
                    else { continue }
                    var copy = endpoint
                    copy.secret = try reseal(
                        endpoint.secret, Self.webhookSecret(appId: endpoint.appId, endpointId: endpoint.id))
                    if copy != endpoint { try transaction.saveWebhookEndpoint(copy, at: now) }
                }
            }
            return count
        }
    }
}
