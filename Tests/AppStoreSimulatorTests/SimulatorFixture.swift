import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import StorekeeperTesting
import Synchronization

/// Delivers notifications in process: records every body and answers with `result(n)` for the
/// n-th attempt (0-based).
final class RecordingTransport: NotificationTransport {
    private let log = Mutex<[(url: URL, body: Data)]>([])
    private let result: @Sendable (Int) -> SendAttemptResult

    init(result: @escaping @Sendable (Int) -> SendAttemptResult = { _ in .success }) { self.result = result }

    func post(_ body: Data, to url: URL) async -> SendAttemptResult {
        let index = log.withLock { log in
            log.append((url, body))
            return log.count - 1
        }
        return result(index)
    }

    var bodies: [Data] { log.withLock { $0.map(\.body) } }
    var count: Int { log.withLock { $0.count } }
}

/// A simulator on a manual clock with one app, its API key and three customers.
struct SimulatorFixture {
    static let bundleId = "com.example.simulator.tests"
    static let appAppleId: Int64 = 1_234_567_890
    static let start = TestSigning.signedDate

    let simulator: AppStoreSimulator
    let clock: ManualClock
    let authority: TestCertificateAuthority
    let apiKey: PrivateKey
    let keyId = "TESTKEY001"
    let issuerId = "11111111-2222-3333-4444-555555555555"
    let transport: RecordingTransport

    init(
        environment: AppStoreEnvironment = .sandbox, transport: RecordingTransport = RecordingTransport(),
        notificationURL: String? = "http://127.0.0.1:9/notifications", authority: TestCertificateAuthority? = nil
    ) async throws {
        self.authority = try authority ?? TestSigning.authority(name: "Simulator Test")
        clock = ManualClock(Self.start)
        apiKey = try PrivateKey.generateP256()
        self.transport = transport
        simulator = AppStoreSimulator(
            environment: environment, authority: self.authority, clock: clock, scale: .calendar,
            transport: transport, tokenClock: clock)
        var app = Self.app
        app.notificationURL = notificationURL
        app.apiKeys = [SimulatedApp.APIKey(keyId: keyId, issuerId: issuerId, publicKeyPEM: apiKey.publicKey.pem)]
        try await simulator.addApp(app)
        for id in ["alice", "bob", "carol"] {
            await simulator.addCustomer(
                SimulatedCustomer(id: id, familyGroup: id == "carol" ? nil : "family"))
        }
    }

    static var app: SimulatedApp {
        let usd = { (price: Int64) in [Price(storefront: "USA", currency: "USD", price: price)] }
        return SimulatedApp(
            bundleId: bundleId, appAppleId: appAppleId,
            products: [
                SimulatedProduct(
                    productId: "yearly", kind: .autoRenewable, groupId: "G1", level: 1, period: .year,
                    prices: usd(49_990),
                    familyShareable: true),
                SimulatedProduct(
                    productId: "monthly", kind: .autoRenewable, groupId: "G1", level: 2, period: .month,
                    prices: usd(5_990), introductoryOffer: SubscriptionOffer(discountType: .freeTrial, period: .week)),
                SimulatedProduct(
                    productId: "lifetime", kind: .nonConsumable, prices: usd(99_990), familyShareable: true),
                SimulatedProduct(productId: "coins", kind: .consumable, prices: usd(1_990)),
            ],
            sharedSecret: "shared-secret", gracePeriodDays: 16)
    }

    func verifier(environment: AppStoreEnvironment = .sandbox) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            rootCertificates: [authority.root], bundleId: Self.bundleId, appAppleId: Self.appAppleId,
            environment: environment, clock: { [clock] in clock.now })
    }

    @discardableResult
    func act(
        _ kind: SimulatorAction.Kind, _ customer: String? = nil, _ productId: String? = nil,
        _ configure: (inout SimulatorAction) -> Void = { _ in }
    ) async throws -> ActionResult {
        var action = SimulatorAction(kind, customer: customer, productId: productId)
        configure(&action)
        return try await simulator.perform(action)
    }

    func token(
        audience: String = AppStoreConnectClaims.audience, expiresIn: Int64 = 600, issuedAt: Int64? = nil,
        keyId: String? = nil, bundleId: String = SimulatorFixture.bundleId, key: PrivateKey? = nil
    ) throws -> String {
        let now = clock.now.secondsSince1970
        let claims = AppStoreConnectClaims(
            iss: issuerId, iat: issuedAt, exp: now + expiresIn, aud: audience, bid: bundleId)
        return try JWSSigner(key: key ?? apiKey).sign(claims, header: ["kid": keyId ?? self.keyId, "typ": "JWT"])
    }
}

extension ActionResult {
    var types: [String] { notifications.map { $0.notificationType + ($0.subtype.map { "/" + $0 } ?? "") } }
}
