import AppStoreSimulator
import AppStoreTrust
import Foundation

/// The demo app as Storekeeper knows it, set up through the admin API exactly as an operator
/// would for a real app: App Store identity, the simulator's root as the trusted root, the
/// simulator's In-App Purchase key for the Server API, the catalog with its entitlement
/// mapping and reference prices (in USD, for Google Play purchases, which show none), a public
/// and a secret key, and a webhook endpoint. Its Google Play side is `DemoPlayStore`'s.
/// - Note: Immutable value; `Sendable`.
struct DemoAppSetup: Sendable {
    static let appId = "demo"

    /// Which entitlements each demo product unlocks: both plans give `pro`, the lifetime
    /// unlock gives `pro` for good and `lifetime`, coins give nothing to keep.
    static func entitlements(of product: SimulatedProduct) -> [String] {
        switch product.kind {
        case .autoRenewable, .nonRenewing: ["pro"]
        case .nonConsumable: ["pro", "lifetime"]
        case .consumable: []
        }
    }

    /// The keys created for the app (shown once).
    struct Keys: Sendable {
        var publicKey: String
        var secretKey: String
    }

    let client: DemoHTTPClient
    let adminKey: String

    func create(
        app: SimulatedApp, simulator data: SimulatorDataDirectory, simulatorURL: String, webhookURL: String
    ) async throws -> Keys {
        let path = "/v1/admin/apps"
        try await client.expect(
            201, "POST", path, key: adminKey,
            json: [
                "id": Self.appId, "bundleId": app.bundleId, "appAppleId": app.appAppleId,
                "environments": ["Sandbox"], "rootCertificatesPEM": [data.authority.root.pem],
                "sharedSecret": app.sharedSecret ?? "demo-shared-secret-0000",
                "appStoreConnect": [
                    "keyId": data.apiKeyId, "issuerId": data.issuerId, "privateKeyPEM": data.apiKey.pkcs8PEM,
                    "baseURL": simulatorURL,
                ],
                "verifyReceiptProductionURL": simulatorURL + "/verifyReceipt",
                "verifyReceiptSandboxURL": simulatorURL + "/verifyReceipt",
            ])
        let publicKey = try await createKey(kind: "public", label: "demo app")
        let secretKey = try await createKey(kind: "secret", label: "demo backend")
        try await client.expect(
            200, "PUT", "/v1/apps/\(Self.appId)/catalog", key: secretKey,
            json: ["products": app.products.map(Self.catalogEntry)])
        try await client.expect(
            201, "POST", "/v1/apps/\(Self.appId)/webhooks", key: secretKey, json: ["url": webhookURL])
        return Keys(publicKey: publicKey, secretKey: secretKey)
    }

    private func createKey(kind: String, label: String) async throws -> String {
        let answer = try await client.expect(
            201, "POST", "/v1/admin/apps/\(Self.appId)/keys", key: adminKey, json: ["kind": kind, "label": label])
        guard let key = answer.json["key"] as? String else { throw DemoFailure("no key in the answer") }
        return key
    }

    /// Storekeeper's catalog entry for a simulator product: same id, kind, group, level and
    /// period.
    static func catalogEntry(_ product: SimulatedProduct) -> [String: Any] {
        var entry: [String: Any] = ["productId": product.productId, "entitlementIds": entitlements(of: product)]
        switch product.kind {
        case .autoRenewable:
            entry["kind"] = "AUTO_RENEWABLE"
            entry["subscriptionGroup"] = product.groupId
            entry["groupLevel"] = product.level
        case .nonRenewing: entry["kind"] = "NON_RENEWING"
        case .nonConsumable: entry["kind"] = "NON_CONSUMABLE"
        case .consumable: entry["kind"] = "CONSUMABLE"
        }
        if let period = product.period { entry["duration"] = period.description }
        // Google Play shows no price in a purchase: analytics takes this one for Play charges.
        if let usd = product.prices.first(where: { $0.currency == "USD" }) {
            entry["referencePrice"] = ["milliunits": usd.price, "currency": usd.currency]
        }
        return entry
    }
}
