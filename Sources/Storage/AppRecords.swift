import AppStoreModels
import Entitlements

/// One app served by Storekeeper and its App Store identity.
/// - Note: Immutable value; `Sendable`.
public struct AppRecord: Sendable, Hashable, Codable {
    public var id: String
    public var bundleId: String
    /// Required by Apple's verifier in production.
    public var appAppleId: Int64?
    /// Environments whose payloads this app accepts.
    public var environments: [AppStoreEnvironment]
    /// The app-specific shared secret for legacy `verifyReceipt`.
    public var sharedSecret: String?
    /// Settings the application layer owns (opaque to storage).
    public var settings: JSONValue
    /// The stored row's version (migration `0007_resource_versions`): 1 when created, one more
    /// on every save. Set by the store's reads; a save ignores it (the store counts).
    public var version: Int64

    public init(
        id: String, bundleId: String, appAppleId: Int64? = nil, environments: [AppStoreEnvironment],
        sharedSecret: String? = nil, settings: JSONValue = .object([:]), version: Int64 = 0
    ) {
        self.id = id
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environments = environments
        self.sharedSecret = sharedSecret
        self.settings = settings
        self.version = version
    }
}

/// An API key: only the SHA-256 of its secret is stored (lowercase hex).
/// - Note: Immutable value; `Sendable`.
public struct APIKeyRecord: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// Shipped in apps: may read and post purchases for one app.
        case `public`
        /// Held by the app's backend.
        case secret
        /// Administers Storekeeper; not bound to an app.
        case admin
    }

    public var id: String
    /// `nil` for admin keys.
    public var appId: String?
    public var kind: Kind
    public var hash: String
    public var label: String
    public var createdAt: Timestamp
    public var revokedAt: Timestamp?

    public init(
        id: String, appId: String?, kind: Kind, hash: String, label: String = "", createdAt: Timestamp,
        revokedAt: Timestamp? = nil
    ) {
        self.id = id
        self.appId = appId
        self.kind = kind
        self.hash = hash
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// Where an app's lifecycle events are delivered, and the secret that signs them.
/// - Note: Immutable value; `Sendable`.
public struct WebhookEndpoint: Sendable, Hashable, Codable {
    public var id: String
    public var appId: String
    public var url: String
    public var secret: String
    public var isEnabled: Bool
    /// The stored row's version, as `AppRecord.version`. Set by `webhookEndpoints(appId:)` and
    /// `lockWebhookEndpoint(id:appId:)`; 0 where a read does not load it (the deliverer's claim).
    public var version: Int64

    public init(id: String, appId: String, url: String, secret: String, isEnabled: Bool = true, version: Int64 = 0) {
        self.id = id
        self.appId = appId
        self.url = url
        self.secret = secret
        self.isEnabled = isEnabled
        self.version = version
    }
}

/// An app's product catalog as stored, with its row's version (1 when first saved, one more on
/// every save).
/// - Note: Immutable value; `Sendable`.
public struct StoredCatalog: Sendable, Hashable {
    public var catalog: ProductCatalog
    public var version: Int64

    public init(catalog: ProductCatalog, version: Int64) {
        self.catalog = catalog
        self.version = version
    }
}
