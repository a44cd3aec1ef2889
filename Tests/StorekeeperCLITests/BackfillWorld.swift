import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperTesting

/// A production App Store simulator on a loopback port, customers who bought from it, and the
/// verifyReceipt-era export of their receipts (`user<TAB>base64 receipt`).
///
/// Customer `user-i` buys the monthly subscription (i % 3 == 0), the lifetime unlock
/// (i % 3 == 1), or both (i % 3 == 2).
struct BackfillWorld {
    static let bundleId = "com.example.backfill"
    static let appAppleId: Int64 = 1_122_334_455
    static let appId = "backfill-app"
    static let keyId = "BACKFILL01"
    static let issuerId = "22222222-3333-4444-5555-666666666666"

    let simulator: AppStoreSimulator
    let server: SimulatorServer
    let authority: TestCertificateAuthority
    let apiKey: PrivateKey
    let users: [String]
    /// Base64 receipt per user.
    let receipts: [String: String]
    /// The transactions each user's receipt lists.
    let transactionIds: [String: [String]]

    static var app: SimulatedApp {
        let usd = { (price: Int64) in [Price(storefront: "USA", currency: "USD", price: price)] }
        return SimulatedApp(
            bundleId: bundleId, appAppleId: appAppleId,
            products: [
                SimulatedProduct(
                    productId: "monthly", kind: .autoRenewable, groupId: "G1", level: 1, period: .month,
                    prices: usd(5_990)),
                SimulatedProduct(productId: "lifetime", kind: .nonConsumable, prices: usd(99_990)),
            ], sharedSecret: "backfill-shared-secret")
    }

    static let catalog = ProductCatalog(products: [
        CatalogProduct(
            productId: "monthly", kind: .autoRenewable, subscriptionGroup: "G1", groupLevel: 1,
            duration: SubscriptionPeriod(iso8601: "P1M"), entitlementIds: ["pro"]),
        CatalogProduct(productId: "lifetime", kind: .nonConsumable, entitlementIds: ["pro", "lifetime"]),
    ])

    /// - Parameters:
    ///   - rateLimits: the simulator's Server API limits (Apple's by default).
    ///   - identifiersAfter: where the simulator's ids start (a world whose purchases another
    ///     world's simulator does not know).
    static func make(
        customers count: Int, authority: TestCertificateAuthority? = nil,
        rateLimits: ServerAPIRateLimits = .apple, identifiersAfter: Int64? = nil
    ) async throws -> BackfillWorld {
        let authority = try authority ?? TestSigning.authority(name: "Backfill Simulator")
        let apiKey = try PrivateKey.generateP256()
        let simulator = AppStoreSimulator(
            environment: .production, authority: authority, serverAPIRateLimits: rateLimits)
        if let identifiersAfter { await simulator.startIdentifiers(after: identifiersAfter) }
        var app = app
        app.apiKeys = [SimulatedApp.APIKey(keyId: keyId, issuerId: issuerId, publicKeyPEM: apiKey.publicKey.pem)]
        try await simulator.addApp(app)
        var users: [String] = []
        var receipts: [String: String] = [:]
        var transactionIds: [String: [String]] = [:]
        for index in 0..<count {
            let user = "user-\(index)"
            users.append(user)
            await simulator.addCustomer(SimulatedCustomer(id: user))
            let products = [["monthly"], ["lifetime"], ["monthly", "lifetime"]][index % 3]
            for product in products {
                _ = try await simulator.perform(SimulatorAction(.purchase, customer: user, productId: product))
            }
            let der = try await simulator.appReceipt(customer: user, bundleId: bundleId)
            receipts[user] = Data(der).base64EncodedString()
            transactionIds[user] = try AppReceipt(der: der).transactionIds
        }
        let server = try SimulatorServer(simulator: simulator, tickInterval: nil)
        return BackfillWorld(
            simulator: simulator, server: server, authority: authority, apiKey: apiKey, users: users,
            receipts: receipts, transactionIds: transactionIds)
    }

    /// The app as Storekeeper stores it: the simulator's root, its API key and base URL.
    var appRecord: AppRecord { appRecord(withKey: true) }

    /// The app, with or without its App Store Connect key (without: only verifyReceipt, with
    /// the shared secret, reaches the App Store).
    func appRecord(withKey: Bool) -> AppRecord {
        let base = server.baseURL.absoluteString
        let settings = AppSettings(
            rootCertificatesPEM: [authority.root.pem],
            appStoreConnect: withKey
                ? AppStoreConnectCredentials(
                    keyId: Self.keyId, issuerId: Self.issuerId, privateKeyPEM: apiKey.pkcs8PEM, baseURL: base) : nil,
            verifyReceiptProductionURL: base + "/verifyReceipt", verifyReceiptSandboxURL: base + "/verifyReceipt")
        return AppRecord(
            id: Self.appId, bundleId: Self.bundleId, appAppleId: Self.appAppleId, environments: [.production],
            sharedSecret: "backfill-shared-secret", settings: settings.jsonValue)
    }

    /// A new database at `path` (a SQLite file or a PostgreSQL URL) holding the app and its catalog.
    func makeDatabase(at path: String, withKey: Bool = true) async throws -> any Store {
        let store = try await StoreLocation(path).open(migrate: true)
        let record = appRecord(withKey: withKey)
        try await store.write { transaction in
            _ = try transaction.insertApp(record, at: TestSigning.signedDate)
            _ = try transaction.saveCatalog(appId: record.id, Self.catalog, at: TestSigning.signedDate)
        }
        return store
    }

    /// The export: one `user<TAB>receipt` line per user.
    var exportLines: [String] { users.map { "\($0)\t\(receipts[$0]!)" } }

    /// Ingests the same purchases the direct way (each transaction id posted, completed from the
    /// App Store), eight at a time: every user's, or only `only`'s; at `rateShare` of Apple's limits.
    func ingestDirectly(into store: any Store, only: [String]? = nil, rateShare: Double = 1) async throws {
        let ingestion = Ingestion(store: store, rateLimiters: AppStoreRateLimiters(share: rateShare))
        let app = try await ingestion.apps.runtime(appId: Self.appId)
        let posts = (only ?? users).flatMap { user in transactionIds[user]!.map { (user, $0) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, (user, transactionId)) in posts.enumerated() {
                if index >= 8 { try await group.next() }
                group.addTask {
                    _ = try await ingestion.purchases.postTransaction(
                        app: app, appUserId: user, signedTransaction: nil, transactionId: transactionId,
                        environment: .production)
                }
            }
            try await group.waitForAll()
        }
    }

    /// What a customer's state comes to in a database: the CustomerInfo (without the instant
    /// it was evaluated at), the lifecycle events, and the number of facts stored (which
    /// depends on the path: the simulator signs each answer anew, so every call adds facts).
    struct Snapshot: Equatable {
        var info: JSONValue
        var events: [LifecycleEvent]
        var factCount: Int

        var state: Snapshot { Snapshot(info: info, events: events, factCount: 0) }
    }

    func snapshots(_ store: any Store, only: [String]? = nil) async throws -> [String: Snapshot] {
        let users = only ?? users
        return try await store.read { reader in
            var result: [String: Snapshot] = [:]
            for user in users {
                guard
                    case .state(let customerId, let json, _, _) = try reader.customerState(
                        appId: Self.appId, knownAs: user, environment: .production)
                else { continue }
                var info = try AppStoreJSON.decode(JSONValue.self, from: Data(json.utf8))
                if case .object(var fields) = info {
                    fields["evaluatedAt"] = nil
                    info = .object(fields)
                }
                result[user] = Snapshot(
                    info: info, events: try reader.events(customerId: customerId, after: nil, limit: 1000).map(\.event),
                    factCount: try reader.facts(customerId: customerId).count)
            }
            return result
        }
    }
}
