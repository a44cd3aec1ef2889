import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import GooglePlayClient
import GooglePlaySimulator
import GooglePlayTrust
import HTTPServer
import SecretSealing
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The whole product on loopback, wired as a deployment is: the App Store simulator serving its
/// Server API on a port, a Storekeeper server on port 0 over a fresh database, an app in
/// Storekeeper that trusts the simulator's CA and calls its Server API with an In-App Purchase
/// key the simulator knows, the simulator sending that app's notifications to Storekeeper's
/// notification URL, and a webhook endpoint that records what Storekeeper delivers.
///
/// One `ManualClock` is "now" for both sides (signing, verification, bearer tokens,
/// evaluation), so a year of renewals runs in milliseconds and every run is repeatable.
/// - Note: Immutable after `configure`; `Sendable`.
final class EndToEndHarness: Sendable {
    static let adminKey = "e2e-admin-key-0123456789abcdef"
    static let keyId = "E2EKEY0001"
    static let issuerId = "0e2e0000-0000-4000-8000-000000000001"
    /// Deliveries are made after every step, but a year of time travel must never make an event
    /// too old to deliver.
    static let webhookMaxAge: Int64 = 10 * 365 * 86_400_000

    let database: TestDatabase
    let clock: ManualClock
    let authority: TestCertificateAuthority
    let apiKey: PrivateKey
    let simulator: AppStoreSimulator
    let simulatorServer: SimulatorServer
    let store: any Store
    let application: StorekeeperApplication
    let server: HTTPServer
    let webhooks: WebhookListener
    /// The Play simulator on its own port, same clock: Storekeeper reads its API, trusts its
    /// push key set, and it pushes to Storekeeper's Play notification URL once `configurePlay` ran.
    let play: PlaySimulator
    let playServer: HTTPServer
    static let playPackage = "com.example.e2e.android"
    static let playAudience = "https://storekeeper.e2e/push"
    /// Unique per run: runs may share one PostgreSQL database.
    let appId: String
    /// The package name scenario runs give the app's Play side (the simulator knows it beside
    /// `playPackage`): unique per run, as a package name belongs to one app in a database.
    let scenarioPlayPackage: String
    private let keys = Keys()
    private let cleanup: @Sendable () -> Void

    /// The app's keys and webhook secret, known once `configure` created them.
    private final class Keys: Sendable {
        let values = Mutex<(publicKey: String, secretKey: String, webhookSecret: String)>(("", "", ""))
    }

    var publicKey: String { keys.values.withLock { $0.publicKey } }
    var secretKey: String { keys.values.withLock { $0.secretKey } }
    var webhookSecret: String { keys.values.withLock { $0.webhookSecret } }

    init(database: TestDatabase) async throws {
        self.database = database
        let run = UUID().uuidString.prefix(8).lowercased()
        appId = "e2e-" + run
        scenarioPlayPackage = "com.example.e2e.run" + run
        let clock = ManualClock(TestSigning.signedDate)
        self.clock = clock
        authority = try EndToEndAuthority.shared()
        apiKey = try PrivateKey.generateP256()
        simulator = AppStoreSimulator(
            environment: .sandbox, authority: authority, clock: clock, scale: .calendar,
            transport: URLSessionNotificationTransport(timeout: 10), tokenClock: clock)
        // Apple's ids are unique store-wide; runs sharing a PostgreSQL database must not reuse them.
        await simulator.startIdentifiers(after: Int64.random(in: 1..<90_000_000) * 1_000_000)
        simulatorServer = try SimulatorServer(
            simulator: simulator,
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0, threadPoolSize: 2),
            tickInterval: nil)
        play = try PlaySimulator(
            packageNames: [Self.playPackage, scenarioPlayPackage], clock: clock,
            push: .init(url: nil, audience: Self.playAudience), signingKey: try EndToEndAuthority.playKeys().signing)
        var playRouter = Router()
        PlaySimulatorRoutes.add(play, to: &playRouter)
        playServer = try HTTPServer(
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0, threadPoolSize: 2),
            responder: playRouter.buildResponder())
        let playBase = playServer.baseURL
        let (store, cleanup) = try await database.open()
        self.store = store
        self.cleanup = cleanup
        application = StorekeeperApplication(
            // The webhook listener is on loopback, which the destination policy refuses by default.
            configuration: ServerConfiguration(
                listen: "127.0.0.1:0", adminKey: Self.adminKey, threadPoolSize: 2, accessLog: false,
                webhookAllowedDestinations: try WebhookDestinationAllowList(["127.0.0.1"])),
            store: store,
            clock: ServerClock(now: { clock.now }, sleep: { _ in try await Task.sleep(for: .milliseconds(2)) }),
            webhookSettings: WebhookDeliverer.Settings(
                requestTimeout: .seconds(5), maxAgeMilliseconds: Self.webhookMaxAge, random: { 0.5 }),
            secrets: StoredSecrets(sealer: SecretSealer(key: try SecretsKey.generate())),
            playService: PlayServiceConfiguration(
                apiBaseURL: playBase,
                keySet: GoogleKeySetCache(
                    loader: GoogleKeySetURLLoader(url: playBase.appendingPathComponent("oauth2/v3/certs")))))
        server = try application.startServer()
        webhooks = try WebhookListener()
    }

    var notificationPath: String { "/v1/apps/\(appId)/notifications/appstore" }

    /// Creates the app in Storekeeper (through the admin API, as an operator would), its keys,
    /// catalog and webhook endpoint, then gives the simulator the app, its notification URL,
    /// the In-App Purchase key and the customers; and the app its Play side when the scenario
    /// drives the Play simulator.
    func configure(_ scenario: EndToEndScenario) async throws {
        let app = scenario.app
        try await expect(
            201,
            request(
                "POST", "/v1/admin/apps", key: Self.adminKey,
                json: [
                    "id": appId, "bundleId": app.bundleId, "appAppleId": app.appAppleId, "environments": ["Sandbox"],
                    "rootCertificatesPEM": [authority.root.pem], "sharedSecret": app.sharedSecret ?? "unused-secret",
                    "appStoreConnect": [
                        "keyId": Self.keyId, "issuerId": Self.issuerId, "privateKeyPEM": apiKey.pkcs8PEM,
                        "baseURL": simulatorServer.baseURL.absoluteString,
                    ],
                ]))
        let publicKey = try await expect(
            201, request("POST", "/v1/admin/apps/\(appId)/keys", key: Self.adminKey, json: ["kind": "public"]))
        let secretKey = try await expect(
            201, request("POST", "/v1/admin/apps/\(appId)/keys", key: Self.adminKey, json: ["kind": "secret"]))
        let secret = try Self.string(secretKey.json["key"])
        try await expect(
            200,
            request(
                "PUT", "/v1/apps/\(appId)/catalog", key: secret,
                json: ["products": Self.catalog(app.products, entitlements: scenario.entitlements)]))
        let hook = try await expect(
            201, request("POST", "/v1/apps/\(appId)/webhooks", key: secret, json: ["url": webhooks.url]))
        let webhookSecret = try Self.string(hook.json["secret"])
        let publicValue = try Self.string(publicKey.json["key"])
        keys.values.withLock { $0 = (publicValue, secret, webhookSecret) }

        var simulated = app
        simulated.notificationURL = server.baseURL.absoluteString + notificationPath
        simulated.apiKeys = [
            SimulatedApp.APIKey(keyId: Self.keyId, issuerId: Self.issuerId, publicKeyPEM: apiKey.publicKey.pem)
        ]
        try await simulator.addApp(simulated)
        for customer in scenario.customers { await simulator.addCustomer(customer) }
        if scenario.usesGooglePlay {
            try await configurePlay(
                packageName: scenarioPlayPackage,
                acknowledgePurchases: scenario.googlePlay?.acknowledgePurchases ?? true)
        }
    }

    /// Storekeeper's catalog for the simulator's products: same ids, kinds, groups, levels and
    /// periods, plus the scenario's entitlement mapping.
    static func catalog(_ products: [SimulatedProduct], entitlements: [String: [String]]) -> [[String: Any]] {
        products.map { product in
            var entry: [String: Any] = [
                "productId": product.productId, "entitlementIds": entitlements[product.productId] ?? [],
            ]
            switch product.kind {
            case .autoRenewable: entry["kind"] = "AUTO_RENEWABLE"
            case .nonRenewing: entry["kind"] = "NON_RENEWING"
            case .consumable: entry["kind"] = "CONSUMABLE"
            case .nonConsumable: entry["kind"] = "NON_CONSUMABLE"
            }
            if product.kind == .autoRenewable {
                entry["subscriptionGroup"] = product.groupId
                entry["groupLevel"] = product.level
            }
            if let period = product.period { entry["duration"] = period.description }
            return entry
        }
    }

    var playNotificationPath: String { "/v1/apps/\(appId)/notifications/googleplay" }

    /// Gives the app its Play side through the admin API (a service account the simulator
    /// issued, the push audience and service account) and points the simulator's pushes at it.
    func configurePlay(packageName: String = EndToEndHarness.playPackage, acknowledgePurchases: Bool = true)
        async throws
    {
        let account = try await play.createServiceAccount(
            email: "storekeeper@e2e.iam.gserviceaccount.com",
            tokenURI: playServer.baseURL.appendingPathComponent("token"), key: try EndToEndAuthority.playKeys().account)
        try await expect(
            200,
            request(
                "PUT", "/v1/admin/apps/\(appId)/googleplay", key: Self.adminKey,
                json: [
                    "packageName": packageName, "serviceAccountKey": String(decoding: account.json, as: UTF8.self),
                    "rtdnAudience": Self.playAudience, "pushServiceAccountEmail": await play.push.serviceAccountEmail,
                    "acknowledgePurchases": acknowledgePurchases,
                ]))
        await play.setPushURL(URL(string: server.baseURL.absoluteString + playNotificationPath))
    }

    func stop() async {
        await server.stop()
        await playServer.stop()
        await simulatorServer.stop()
        await webhooks.stop()
        await store.close()
        cleanup()
    }

    // MARK: HTTP

    /// Sends a request to Storekeeper; `json` becomes the body.
    func request(_ method: String, _ path: String, key: String? = nil, json: Any? = nil) async throws -> HTTPAnswer {
        try await HTTPAnswer.send(method, server.baseURL.absoluteString + path, key: key, json: json)
    }

    @discardableResult
    func expect(_ status: Int, _ answer: HTTPAnswer) throws -> HTTPAnswer {
        guard answer.status == status else {
            throw EndToEndFailure("expected \(status), got \(answer.status): \(answer.text)")
        }
        return answer
    }

    static func string(_ value: Any?) throws -> String {
        guard let text = value as? String else {
            throw EndToEndFailure("expected a string, got \(String(describing: value))")
        }
        return text
    }
}

/// One CA for every run of the process: generating it is the slowest part of a run's setup,
/// and what it signs never outlives the process.
enum EndToEndAuthority {
    private static let authority = Result { try TestSigning.authority(name: "E2E App Store Simulator") }

    static func shared() throws -> TestCertificateAuthority { try authority.get() }

    /// The Play simulator's push-signing key and the service account's, made once per process:
    /// RSA-2048 generation was half of the CPU of the scenario suites, which start a harness
    /// per run.
    private static let play = Result {
        (signing: try RSAPrivateKey.generate(), account: try RSAPrivateKey.generate())
    }

    static func playKeys() throws -> (signing: RSAPrivateKey, account: RSAPrivateKey) { try play.get() }
}

/// Why a step of an end-to-end run could not go on.
struct EndToEndFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// An HTTP answer as the tests read it.
struct HTTPAnswer: Sendable {
    let status: Int
    let body: Data

    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:] }

    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 20
        return URLSession(configuration: configuration)
    }()

    static func send(_ method: String, _ url: String, key: String? = nil, json: Any? = nil) async throws -> HTTPAnswer {
        guard let target = URL(string: url) else { throw EndToEndFailure("bad URL \(url)") }
        var request = URLRequest(url: target)
        request.httpMethod = method
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw EndToEndFailure("no HTTP response from \(url)") }
        return HTTPAnswer(status: http.statusCode, body: data)
    }
}
