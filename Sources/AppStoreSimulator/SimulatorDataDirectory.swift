import AppStoreModels
import AppStoreTrust
import Foundation

/// What `storekeeper simulate serve --data DIR` keeps between runs: the CA (generated on first
/// start, as Apple's roots never change under a running app) and an in-app purchase API key
/// for the demo app, so that a server configured once keeps working.
///
/// Layout: `ca/{root,intermediate,leaf}.{der,pem,key.pem}`, `api-key.p8`, `api-key.json`
/// (`keyId`, `issuerId`).
public struct SimulatorDataDirectory: Sendable {
    public let url: URL
    public let authority: TestCertificateAuthority
    public let apiKey: PrivateKey
    public let apiKeyId: String
    public let issuerId: String

    /// Opens the directory, generating what is missing; `now` dates the new CA (valid from a year
    /// before to twenty years after, so time-travelling scenarios stay inside it).
    public static func open(_ url: URL, now: Timestamp) throws -> SimulatorDataDirectory {
        let caURL = url.appendingPathComponent("ca")
        let authority: TestCertificateAuthority
        if FileManager.default.fileExists(atPath: caURL.appendingPathComponent("root.der").path) {
            authority = try TestCertificateAuthority.read(from: caURL)
        } else {
            let year: Int64 = 365 * 86_400_000
            authority = try TestCertificateAuthority.generate(
                name: "Storekeeper App Store Simulator", validFrom: now.adding(milliseconds: -year),
                validUntil: now.adding(milliseconds: 20 * year))
            try authority.write(to: caURL)
        }
        let keyURL = url.appendingPathComponent("api-key.p8")
        let metaURL = url.appendingPathComponent("api-key.json")
        let key: PrivateKey
        var meta: [String: String]
        if FileManager.default.fileExists(atPath: keyURL.path), let data = try? Data(contentsOf: metaURL),
            let decoded = try? JSONDecoder().decode([String: String].self, from: data)
        {
            key = try PrivateKey(contentsOf: keyURL)
            meta = decoded
        } else {
            key = try PrivateKey.generateP256()
            meta = [
                "keyId": "SIMKEY" + String(UUID().uuidString.prefix(4)),
                "issuerId": UUID().uuidString.lowercased(),
            ]
            try key.pkcs8PEM.write(to: keyURL, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyURL.path)
            try JSONEncoder().encode(meta).write(to: metaURL)
        }
        return SimulatorDataDirectory(
            url: url, authority: authority, apiKey: key, apiKeyId: meta["keyId"] ?? "SIMKEY",
            issuerId: meta["issuerId"] ?? "")
    }

    /// This directory's key as App Store Connect would list it for an app.
    public var appStoreConnectKey: SimulatedApp.APIKey {
        SimulatedApp.APIKey(keyId: apiKeyId, issuerId: issuerId, publicKeyPEM: apiKey.publicKey.pem)
    }
}

extension SimulatedApp {
    /// The demo catalog: monthly and yearly subscriptions in one group with a one-week free
    /// trial, a lifetime unlock and a consumable, prices in three storefronts.
    public static func demo(bundleId: String = "com.example.storekeeper.demo", keys: [APIKey] = []) -> SimulatedApp {
        func prices(_ usd: Int64, _ eur: Int64, _ gbp: Int64) -> [Price] {
            [
                Price(storefront: "USA", currency: "USD", price: usd),
                Price(storefront: "FRA", currency: "EUR", price: eur),
                Price(storefront: "GBR", currency: "GBP", price: gbp),
            ]
        }
        let trial = SubscriptionOffer(discountType: .freeTrial, period: .week)
        return SimulatedApp(
            bundleId: bundleId, appAppleId: 6_450_000_001, bundleVersion: "1",
            products: [
                SimulatedProduct(
                    productId: bundleId + ".yearly", kind: .autoRenewable, groupId: "21000001", level: 1,
                    period: .year, prices: prices(49_990, 49_990, 44_990), introductoryOffer: trial,
                    offerCodes: [
                        SubscriptionOffer(
                            id: "HALFYEAR", discountType: .payUpFront, period: .year,
                            prices: prices(24_990, 24_990, 22_990))
                    ],
                    winBackOffers: [
                        SubscriptionOffer(
                            id: "COMEBACK", discountType: .payUpFront, period: .year,
                            prices: prices(29_990, 29_990, 26_990))
                    ],
                    familyShareable: true),
                SimulatedProduct(
                    productId: bundleId + ".monthly", kind: .autoRenewable, groupId: "21000001", level: 2,
                    period: .month, prices: prices(5_990, 5_990, 4_990), introductoryOffer: trial,
                    promotionalOffers: [
                        SubscriptionOffer(
                            id: "THREEFOR1", discountType: .payAsYouGo, period: .month, periodCount: 3,
                            prices: prices(990, 990, 990))
                    ],
                    familyShareable: true),
                SimulatedProduct(
                    productId: bundleId + ".lifetime", kind: .nonConsumable, prices: prices(99_990, 99_990, 89_990),
                    familyShareable: true),
                SimulatedProduct(
                    productId: bundleId + ".coins100", kind: .consumable, prices: prices(1_990, 1_990, 1_790)),
            ],
            sharedSecret: "0123456789abcdef0123456789abcdef", gracePeriodDays: 16, apiKeys: keys)
    }
}
