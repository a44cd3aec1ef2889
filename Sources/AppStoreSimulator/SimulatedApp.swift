import AppStoreModels
import Foundation

/// An app in the simulator: identity, catalog, shared secret, notification URLs, the App Store
/// Connect API keys allowed to call the Server API for it, and the App Store Connect settings
/// that change lifecycles (billing grace period).
/// - Note: Immutable value; `Sendable`.
public struct SimulatedApp: Sendable, Hashable, Codable {
    /// An in-app purchase key as App Store Connect knows it: the simulator checks bearer tokens
    /// against its public half.
    public struct APIKey: Sendable, Hashable, Codable {
        public var keyId: String
        public var issuerId: String
        public var publicKeyPEM: String

        public init(keyId: String, issuerId: String, publicKeyPEM: String) {
            self.keyId = keyId
            self.issuerId = issuerId
            self.publicKeyPEM = publicKeyPEM
        }
    }

    public var bundleId: String
    public var appAppleId: Int64
    public var bundleVersion: String
    public var products: [SimulatedProduct]
    /// The app-specific shared secret verifyReceipt checks as `password`.
    public var sharedSecret: String?
    /// Where V2 notifications go; none are sent (but history is kept) without it.
    public var notificationURL: String?
    /// Where V1 notifications go, when the app still asks for them.
    public var notificationURLV1: String?
    /// Billing grace period in days (Apple offers 3, 16 or 28); nil = no grace period.
    public var gracePeriodDays: Int?
    /// How long Apple keeps retrying billing before the subscription expires.
    public var billingRetryDays: Int
    public var apiKeys: [APIKey]

    public init(
        bundleId: String, appAppleId: Int64, bundleVersion: String = "1", products: [SimulatedProduct],
        sharedSecret: String? = nil, notificationURL: String? = nil, notificationURLV1: String? = nil,
        gracePeriodDays: Int? = nil, billingRetryDays: Int = 60, apiKeys: [APIKey] = []
    ) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.bundleVersion = bundleVersion
        self.products = products
        self.sharedSecret = sharedSecret
        self.notificationURL = notificationURL
        self.notificationURLV1 = notificationURLV1
        self.gracePeriodDays = gracePeriodDays
        self.billingRetryDays = billingRetryDays
        self.apiKeys = apiKeys
    }

    private enum CodingKeys: String, CodingKey {
        case bundleId, appAppleId, bundleVersion, products, sharedSecret, notificationURL, notificationURLV1,
            gracePeriodDays, billingRetryDays, apiKeys
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        bundleId = try container.decode(String.self, forKey: .bundleId)
        appAppleId = try container.decode(Int64.self, forKey: .appAppleId)
        bundleVersion = try container.decodeIfPresent(String.self, forKey: .bundleVersion) ?? "1"
        products = try container.decodeIfPresent([SimulatedProduct].self, forKey: .products) ?? []
        sharedSecret = try container.decodeIfPresent(String.self, forKey: .sharedSecret)
        notificationURL = try container.decodeIfPresent(String.self, forKey: .notificationURL)
        notificationURLV1 = try container.decodeIfPresent(String.self, forKey: .notificationURLV1)
        gracePeriodDays = try container.decodeIfPresent(Int.self, forKey: .gracePeriodDays)
        billingRetryDays = try container.decodeIfPresent(Int.self, forKey: .billingRetryDays) ?? 60
        apiKeys = try container.decodeIfPresent([APIKey].self, forKey: .apiKeys) ?? []
        var seen: Set<String> = []
        for product in products where !seen.insert(product.productId).inserted {
            throw DecodingError.dataCorruptedError(
                forKey: .products, in: container, debugDescription: "product \(product.productId) is listed twice")
        }
    }

    func product(_ productId: String) -> SimulatedProduct? { products.first { $0.productId == productId } }
}
