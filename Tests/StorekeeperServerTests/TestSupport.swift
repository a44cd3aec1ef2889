import AppStoreModels
import AppStoreTrust
import Foundation
import HTTPServer
import SecretSealing
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A unique id for this test run (apps, transactions, notifications never collide, even on a
/// shared PostgreSQL database).
func uniqueDigits() -> String {
    String(UInt64.random(in: 1_000_000_000_000...9_000_000_000_000))
}

/// The HTTP answer as a test sees it.
struct TestResponse: Sendable {
    let status: Int
    let headers: [String: String]
    let body: Data

    var text: String { String(decoding: body, as: UTF8.self) }

    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:] }

    /// `error.code` of the `{"error":{"code","message"}}` shape.
    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
}

let testSession: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 20
    return URLSession(configuration: configuration)
}()

/// A Storekeeper server on 127.0.0.1 port 0 over a fresh store, with a hand-moved clock, a
/// test CA whose root the apps trust and a secrets key of its own.
final class ServerHarness: Sendable {
    static let adminKey = "test-admin-key-0123456789abcdef"

    let application: StorekeeperApplication
    let server: HTTPServer
    let store: any Store
    let clock: FixedClock
    let ca: TestCertificateAuthority
    let secrets: StoredSecrets
    private let cleanup: @Sendable () -> Void

    /// - Parameters:
    ///   - secrets: how stored secrets are sealed (default: under a key generated for this harness).
    ///   - opened: a store to serve instead of a fresh one from `database` (a restart), and
    ///     what `stop()` runs after closing it.
    ///   - webhookAllowedDestinations: the server's webhook allow-list (`["127.0.0.1"]` for tests
    ///     whose listeners are on loopback); empty by default, as in production.
    ///   - webhookResolver: the destination checks' resolver (default: the system's).
    ///   - configure: changes to the server's configuration (HTTP limits, …) before it starts.
    ///   - serverClock: the server's clock instead of `clock` (the wall clock, for a server that
    ///     shares a database with a `storekeeper serve` process).
    init(
        database: TestDatabase = .sqlite, ca: TestCertificateAuthority? = nil,
        connections: AppStoreConnectionFactory? = nil, webhookSettings: WebhookDeliverer.Settings? = nil,
        secrets: StoredSecrets? = nil, opened: (store: any Store, cleanup: @Sendable () -> Void)? = nil,
        webhookAllowedDestinations: [String] = [], webhookResolver: (any HostResolver)? = nil,
        purchaseCompletionWaitMilliseconds: Int = 2000, jobSettings: JobWorker.Settings? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in }, serverClock: ServerClock? = nil
    ) async throws {
        let (store, cleanup) = try await Self.open(database, opened)
        let secrets = try secrets ?? StoredSecrets(sealer: SecretSealer(key: SecretsKey.generate()))
        self.secrets = secrets
        let clock = FixedClock(TestSigning.signedDate)
        self.clock = clock
        self.store = store
        self.cleanup = cleanup
        self.ca = try ca ?? TestSigning.authority()
        var configuration = ServerConfiguration(
            listen: "127.0.0.1:0", adminKey: Self.adminKey, threadPoolSize: 2, accessLog: false,
            webhookAllowedDestinations: try WebhookDestinationAllowList(webhookAllowedDestinations),
            purchaseCompletionWaitMilliseconds: purchaseCompletionWaitMilliseconds)
        configure(&configuration)
        application = StorekeeperApplication(
            configuration: configuration, store: store,
            clock: serverClock
                ?? ServerClock(now: clock.function, sleep: { _ in try await Task.sleep(for: .milliseconds(2)) }),
            appStoreConnections: connections ?? { _, _, _ in nil },
            webhookSettings: webhookSettings
                ?? WebhookDeliverer.Settings(requestTimeout: .seconds(5), random: { 0.5 }), secrets: secrets,
            webhookResolver: webhookResolver,
            jobSettings: jobSettings ?? JobWorker.Settings(random: { 0.5 }))
        server = try application.startServer()
    }

    private static func open(_ database: TestDatabase, _ opened: (store: any Store, cleanup: @Sendable () -> Void)?)
        async throws -> (store: any Store, cleanup: @Sendable () -> Void)
    {
        if let opened { return opened }
        return try await database.open()
    }

    func stop() async {
        await server.stop()
        await store.close()
        cleanup()
    }

    /// Sends a request; `json` is encoded as the body with `Content-Type: application/json`.
    func request(
        _ method: String, _ path: String, key: String? = nil, json: Any? = nil, body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws -> TestResponse {
        var request = URLRequest(url: URL(string: server.baseURL.absoluteString + path)!)
        request.httpMethod = method
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let body { request.httpBody = body }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await testSession.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields["\(name)"] = "\(value)" }
        return TestResponse(status: http.statusCode, headers: fields, body: data)
    }

    /// Keys of an app created through the admin API.
    struct AppKeys: Sendable {
        var appId: String
        var bundleId: String
        var publicKey: String
        var secretKey: String
    }

    /// The app posts a signed transaction for `user`; anything but 200 is recorded as an issue.
    func postTransaction(_ app: AppKeys, user: String, _ jws: String, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let response = try await request(
            "POST", "/v1/apps/\(app.appId)/customers/\(user)/transactions", key: app.publicKey,
            json: ["signedTransaction": jws])
        #expect(response.status == 200, "\(response.text)", sourceLocation: sourceLocation)
    }

    /// Creates a Sandbox app trusting this harness's CA, with the monthly product unlocking
    /// `pro`, and a public and a secret key.
    func createApp(
        id: String = "app-\(uniqueDigits())", bundleId: String = "com.example", settings: [String: Any] = [:]
    ) async throws -> AppKeys {
        var body: [String: Any] = [
            "id": id, "bundleId": bundleId, "environments": ["Sandbox"], "rootCertificatesPEM": [ca.root.pem],
            "sharedSecret": "shared-secret-\(id)",
        ]
        body.merge(settings) { $1 }
        let created = try await request("POST", "/v1/admin/apps", key: Self.adminKey, json: body)
        precondition(created.status == 201, "app creation failed: \(created.text)")
        let catalog: [String: Any] = [
            "products": [
                [
                    "productId": "com.example.monthly", "kind": "AUTO_RENEWABLE", "subscriptionGroup": "group",
                    "groupLevel": 1, "duration": "P1M", "entitlementIds": ["pro"],
                ]
            ]
        ]
        let publicKey = try await request(
            "POST", "/v1/admin/apps/\(id)/keys", key: Self.adminKey, json: ["kind": "public", "label": "ios"])
        let secretKey = try await request(
            "POST", "/v1/admin/apps/\(id)/keys", key: Self.adminKey, json: ["kind": "secret", "label": "backend"])
        let keys = AppKeys(
            appId: id, bundleId: bundleId, publicKey: publicKey.json["key"] as! String,
            secretKey: secretKey.json["key"] as! String)
        let saved = try await request("PUT", "/v1/apps/\(id)/catalog", key: keys.secretKey, json: catalog)
        precondition(saved.status == 200, "catalog failed: \(saved.text)")
        return keys
    }
}

/// Signed App Store payloads from a test CA.
struct AppStoreSigner: Sendable {
    let ca: TestCertificateAuthority
    var bundleId = "com.example"
    var environment = AppStoreEnvironment.sandbox

    static let day: Int64 = 86_400_000

    func transaction(
        id: String, originalId: String, purchase: Timestamp, expires: Timestamp, signed: Timestamp,
        revocation: Timestamp? = nil, reason: TransactionReason = .purchase, appAccountToken: UUID? = nil
    ) throws -> String {
        var payload = TestSigning.transaction(
            bundleId: bundleId, environment: environment, signedDate: signed, transactionId: id)
        payload.originalTransactionId = originalId
        payload.purchaseDate = purchase
        payload.originalPurchaseDate = purchase
        payload.expiresDate = expires
        payload.webOrderLineItemId = "w\(id)"
        payload.subscriptionGroupIdentifier = "group"
        payload.transactionReason = RawEnum(reason)
        payload.appAccountToken = appAccountToken
        if let revocation {
            payload.revocationDate = revocation
            payload.revocationReason = RawEnum(.other)
        }
        return try ca.signer.sign(payload)
    }

    /// A one-time purchase (`.consumable` or `.nonConsumable`) of `productId`.
    func oneTime(id: String, productId: String, type: ProductType, signed: Timestamp) throws -> String {
        var payload = TestSigning.transaction(
            bundleId: bundleId, environment: environment, signedDate: signed, transactionId: id)
        payload.productId = productId
        payload.type = RawEnum(type)
        payload.expiresDate = nil
        payload.subscriptionGroupIdentifier = nil
        payload.webOrderLineItemId = nil
        return try ca.signer.sign(payload)
    }

    func renewal(
        originalId: String, signed: Timestamp, autoRenew: Bool = true, billingRetry: Bool = false,
        grace: Timestamp? = nil, expirationIntent: ExpirationIntent? = nil
    ) throws -> String {
        var payload = JWSRenewalInfoDecodedPayload()
        payload.originalTransactionId = originalId
        payload.productId = "com.example.monthly"
        payload.autoRenewProductId = "com.example.monthly"
        payload.autoRenewStatus = RawEnum(autoRenew ? .on : .off)
        payload.isInBillingRetryPeriod = billingRetry
        payload.gracePeriodExpiresDate = grace
        payload.expirationIntent = expirationIntent.map { RawEnum($0) }
        payload.signedDate = signed
        payload.environment = RawEnum(environment)
        return try ca.signer.sign(payload)
    }

    func notification(
        _ type: NotificationTypeV2, _ subtype: Subtype? = nil, transaction: String? = nil, renewal: String? = nil,
        signed: Timestamp, uuid: String = UUID().uuidString.lowercased()
    ) throws -> String {
        var data = NotificationData()
        data.environment = RawEnum(environment)
        data.bundleId = bundleId
        data.signedTransactionInfo = transaction
        data.signedRenewalInfo = renewal
        var payload = ResponseBodyV2DecodedPayload()
        payload.notificationType = RawEnum(type)
        payload.subtype = subtype.map { RawEnum($0) }
        payload.notificationUUID = uuid
        payload.version = "2.0"
        payload.signedDate = signed
        payload.data = data
        return try ca.signer.sign(payload)
    }
}

/// An HTTP listener that records webhook deliveries and answers with a chosen status.
final class WebhookReceiver: Sendable {
    struct Delivery: Sendable {
        var headers: HTTPHeaders
        var body: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:] }
    }

    /// The recorded deliveries and the status to answer.
    /// - Note: Thread-safe: behind a `Mutex`.
    final class State: Sendable {
        let mutex = Mutex<(deliveries: [Delivery], status: Int)>(([], 200))
    }

    let server: HTTPServer
    private let box: State

    init() throws {
        let box = State()
        self.box = box
        server = try HTTPServer(
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0, threadPoolSize: 1)
        ) { request in
            let status = box.mutex.withLock { state in
                state.deliveries.append(Delivery(headers: request.headers, body: request.body))
                return state.status
            }
            return HTTPResponse(status: HTTPStatus(status))
        }
    }

    var url: String { server.baseURL.absoluteString + "/hooks" }
    var deliveries: [Delivery] { box.mutex.withLock { $0.deliveries } }
    func answer(_ status: Int) { box.mutex.withLock { $0.status = status } }
    func stop() async { await server.stop() }
}

extension Timestamp {
    func plus(days: Double) -> Timestamp { adding(milliseconds: Int64(days * 86_400_000)) }
}
