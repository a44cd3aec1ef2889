import AppStoreModels
import AppStoreTrust
import Foundation
import Storage
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Tenant isolation through the HTTP API: two apps may share a bundle id and an environment,
/// and what one app stored never makes another app's genuine payload a duplicate, whether the
/// first app received the same payload (twin apps) or a forgery signed by its own roots with
/// the second app's ids.
@Suite(.serialized)
struct TenantIsolationTests {
    static var databases: [TestDatabase] {
        [.sqlite] + (TestDatabase.postgresURL.map { [.postgres($0)] } ?? [])
    }

    static let t0 = TestSigning.signedDate

    /// `entitlements.pro` of a CustomerInfo answer.
    static func pro(_ response: TestResponse) -> [String: Any] {
        (response.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any] ?? [:]
    }

    static func milliseconds(_ value: Any?) -> Int64? { (value as? NSNumber)?.int64Value }

    /// The raw JWS of the customer's stored transactions, oldest first.
    static func storedJWS(_ harness: ServerHarness, _ app: ServerHarness.AppKeys, _ appUserId: String) async throws
        -> [String]
    {
        let page = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/customers/\(appUserId)/transactions?kind=transaction", key: app.secretKey)
        #expect(page.status == 200, "\(page.text)")
        return (page.json["items"] as? [[String: Any]] ?? []).compactMap { $0["raw"] as? String }
    }

    func postTransaction(
        _ harness: ServerHarness, _ app: ServerHarness.AppKeys, _ appUserId: String, _ jws: String
    ) async throws -> TestResponse {
        try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/\(appUserId)/transactions", key: app.publicKey,
            json: ["signedTransaction": jws])
    }

    func postNotification(_ harness: ServerHarness, _ app: ServerHarness.AppKeys, _ payload: String) async throws
        -> TestResponse
    {
        try await harness.request(
            "POST", "/v1/apps/\(app.appId)/notifications/appstore", json: ["signedPayload": payload])
    }

    @Test(
        "twin apps (one bundle id, one environment): the same signed transaction grants in each", arguments: databases)
    func twinAppsSameTransaction(database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database)
        defer { Task { await harness.stop() } }
        let first = try await harness.createApp(bundleId: "com.example")
        let second = try await harness.createApp(bundleId: "com.example")
        harness.clock.set(Self.t0.plus(days: 1))
        let id = uniqueDigits()
        let jws = try AppStoreSigner(ca: harness.ca).transaction(
            id: id, originalId: id, purchase: Self.t0, expires: Self.t0.plus(days: 30), signed: Self.t0)

        for app in [first, second] {
            let posted = try await postTransaction(harness, app, "ann", jws)
            #expect(posted.status == 200, "\(app.appId): \(posted.text)")
            #expect(Self.pro(posted)["isActive"] as? Bool == true, "\(app.appId): \(posted.text)")
            #expect(Self.pro(posted)["transactionId"] as? String == id)
        }
        for app in [first, second] {
            let read = try await harness.request("GET", "/v1/apps/\(app.appId)/customers/ann", key: app.publicKey)
            #expect(Self.pro(read)["isActive"] as? Bool == true, "\(app.appId): \(read.text)")
            #expect(Self.milliseconds(Self.pro(read)["expiresDate"]) == Self.t0.plus(days: 30).millisecondsSince1970)
            #expect(try await Self.storedJWS(harness, app, "ann") == [jws])
        }
    }

    @Test("twin apps: the same V2 notification (one notificationUUID) is applied in each", arguments: databases)
    func twinAppsSameNotification(database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database)
        defer { Task { await harness.stop() } }
        let first = try await harness.createApp(bundleId: "com.example")
        let second = try await harness.createApp(bundleId: "com.example")
        let signer = AppStoreSigner(ca: harness.ca)
        harness.clock.set(Self.t0.plus(days: 1))
        let id = uniqueDigits()
        let purchase = try signer.transaction(
            id: id, originalId: id, purchase: Self.t0, expires: Self.t0.plus(days: 30), signed: Self.t0)
        for app in [first, second] {
            #expect(try await postTransaction(harness, app, "ann", purchase).status == 200)
        }

        // The renewal reaches both apps with one notificationUUID.
        harness.clock.set(Self.t0.plus(days: 31))
        let renewalId = uniqueDigits()
        let uuid = UUID().uuidString.lowercased()
        let renewed = try signer.notification(
            .didRenew,
            transaction: try signer.transaction(
                id: renewalId, originalId: id, purchase: Self.t0.plus(days: 30), expires: Self.t0.plus(days: 60),
                signed: Self.t0.plus(days: 30), reason: .renewal),
            renewal: try signer.renewal(originalId: id, signed: Self.t0.plus(days: 30)),
            signed: Self.t0.plus(days: 30), uuid: uuid)
        for app in [first, second] {
            let delivered = try await postNotification(harness, app, renewed)
            #expect(delivered.status == 200, "\(app.appId): \(delivered.text)")
            #expect(delivered.json["outcome"] as? String == "applied", "\(app.appId): \(delivered.text)")
            #expect(delivered.json["notificationId"] as? String == uuid)
        }
        // A replay within an app is still a duplicate.
        #expect(try await postNotification(harness, first, renewed).json["outcome"] as? String == "duplicate")

        for app in [first, second] {
            let read = try await harness.request("GET", "/v1/apps/\(app.appId)/customers/ann", key: app.publicKey)
            #expect(Self.pro(read)["isActive"] as? Bool == true, "\(app.appId): \(read.text)")
            #expect(Self.pro(read)["transactionId"] as? String == renewalId, "\(app.appId): \(read.text)")
            #expect(Self.milliseconds(Self.pro(read)["expiresDate"]) == Self.t0.plus(days: 60).millisecondsSince1970)
            let stored = try await harness.store.read { try $0.notification(appId: app.appId, uuid: uuid) }
            #expect(stored?.appId == app.appId)
            #expect(stored?.outcome == "applied")
            #expect(stored?.signedPayload == renewed)
            #expect(try await harness.store.read { try $0.notificationCount(appId: app.appId) } == 1)
        }
    }

    @Test(
        "another tenant's CA signing this app's transactionId, signedDate and notificationUUID first shadows nothing",
        arguments: databases)
    func forgedByAnotherTenant(database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database)
        defer { Task { await harness.stop() } }
        let victim = try await harness.createApp(bundleId: "com.example")
        // Tenant B trusts only its own CA, under its own bundle id.
        let tenantCA = try TestSigning.authority(name: "Tenant B Own CA")
        let tenant = try await harness.createApp(
            bundleId: "com.tenant-b", settings: ["rootCertificatesPEM": [tenantCA.root.pem]])
        let genuine = AppStoreSigner(ca: harness.ca)
        let forger = AppStoreSigner(ca: tenantCA, bundleId: "com.tenant-b")
        harness.clock.set(Self.t0.plus(days: 1))
        let id = uniqueDigits()

        // B first: the victim's transactionId and signedDate, signed by B's own CA.
        let forged = try forger.transaction(
            id: id, originalId: id, purchase: Self.t0, expires: Self.t0.plus(days: 30), signed: Self.t0)
        let accepted = try await postTransaction(harness, tenant, "mallory", forged)
        #expect(accepted.status == 200, "\(accepted.text)")
        // The victim does not trust B's CA.
        let refused = try await postTransaction(harness, victim, "mallory", forged)
        #expect(refused.status == 400)
        #expect(refused.errorCode == "verification_failed")

        // The victim's genuine purchase still grants, from its own fact.
        let real = try genuine.transaction(
            id: id, originalId: id, purchase: Self.t0, expires: Self.t0.plus(days: 30), signed: Self.t0)
        let purchased = try await postTransaction(harness, victim, "ann", real)
        #expect(purchased.status == 200, "\(purchased.text)")
        #expect(Self.pro(purchased)["isActive"] as? Bool == true, "\(purchased.text)")
        #expect(Self.pro(purchased)["transactionId"] as? String == id)
        #expect(try await Self.storedJWS(harness, victim, "ann") == [real])
        #expect(try await Self.storedJWS(harness, tenant, "mallory") == [forged])

        // The same with a notification: B forges the victim's next notificationUUID first.
        harness.clock.set(Self.t0.plus(days: 31))
        let uuid = UUID().uuidString.lowercased()
        let renewalId = uniqueDigits()
        func renewal(_ signer: AppStoreSigner) throws -> String {
            try signer.notification(
                .didRenew,
                transaction: try signer.transaction(
                    id: renewalId, originalId: id, purchase: Self.t0.plus(days: 30), expires: Self.t0.plus(days: 60),
                    signed: Self.t0.plus(days: 30), reason: .renewal),
                signed: Self.t0.plus(days: 30), uuid: uuid)
        }
        let forgedNotification = try await postNotification(harness, tenant, try renewal(forger))
        #expect(forgedNotification.json["outcome"] as? String == "applied", "\(forgedNotification.text)")
        let delivered = try await postNotification(harness, victim, try renewal(genuine))
        #expect(delivered.status == 200, "\(delivered.text)")
        #expect(delivered.json["outcome"] as? String == "applied", "\(delivered.text)")
        let read = try await harness.request("GET", "/v1/apps/\(victim.appId)/customers/ann", key: victim.publicKey)
        #expect(Self.pro(read)["transactionId"] as? String == renewalId, "\(read.text)")
        #expect(Self.milliseconds(Self.pro(read)["expiresDate"]) == Self.t0.plus(days: 60).millisecondsSince1970)
        #expect(try await Self.storedJWS(harness, victim, "ann").count == 2)
    }
}
