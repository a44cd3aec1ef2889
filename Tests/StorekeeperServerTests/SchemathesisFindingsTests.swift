import AppStoreModels
import AppStoreTrust
import Foundation
import HTTPServer
import SecretSealing
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Regressions for what the schemathesis run (tests/schemathesis/run.sh) found against the
/// live server: answers that were 5xx or that the OpenAPI document did not describe.
@Suite(.serialized) struct SchemathesisFindingsTests {
    /// The application with the real App Store connection factory (not the harness's "no
    /// connection"), answered in process. Nothing here reaches the network: every request
    /// below fails on the app's configuration before a connection would be opened.
    private static func liveApplication() async throws -> (
        StorekeeperApplication, TestCertificateAuthority, @Sendable () async -> Void
    ) {
        let (store, cleanup) = try await TestDatabase.sqlite.open()
        let clock = FixedClock(TestSigning.signedDate)
        let application = StorekeeperApplication(
            configuration: ServerConfiguration(adminKey: ServerHarness.adminKey, accessLog: false), store: store,
            clock: ServerClock(now: clock.function),
            secrets: StoredSecrets(sealer: SecretSealer(key: try SecretsKey.generate())))
        return (
            application, try TestSigning.authority(),
            {
                await store.close()
                cleanup()
            }
        )
    }

    private static func send(
        _ application: StorekeeperApplication, _ method: HTTPMethod, _ path: String, key: String,
        json: [String: Any]
    ) async throws -> (status: Int, json: [String: Any]) {
        let request = HTTPRequest(
            method: method, path: path,
            headers: ["Authorization": "Bearer \(key)", "Content-Type": "application/json"],
            body: try JSONSerialization.data(withJSONObject: json))
        let response = await application.responder.respond(to: request)
        let object = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:]
        return (response.status.code, object)
    }

    /// Found: an app with a shared secret (for V1 notifications) but no App Store Connect key
    /// answered 502 `app_store_error` to a valid signed transaction, because the verifyReceipt-only
    /// connection was asked for subscription statuses. The signed transaction must be stored on
    /// its own, as for an app with neither; a bare transaction id, which needs the API, is 409.
    @Test func sharedSecretWithoutAppStoreConnectKey() async throws {
        let (application, ca, stop) = try await Self.liveApplication()
        let admin = ServerHarness.adminKey
        let created = try await Self.send(
            application, .post, "/v1/admin/apps", key: admin,
            json: [
                "id": "secret-only", "bundleId": "com.example", "environments": ["Sandbox"],
                "rootCertificatesPEM": [ca.root.pem], "sharedSecret": "shared-secret-0123456789",
            ])
        #expect(created.status == 201)
        _ = try await Self.send(
            application, .put, "/v1/apps/secret-only/catalog", key: admin,
            json: [
                "products": [
                    [
                        "productId": "com.example.monthly", "kind": "AUTO_RENEWABLE", "subscriptionGroup": "group",
                        "groupLevel": 1, "duration": "P1M", "entitlementIds": ["pro"],
                    ]
                ]
            ])
        let signer = AppStoreSigner(ca: ca)
        let start = TestSigning.signedDate.plus(days: -1)
        let jws = try signer.transaction(
            id: "3000000001", originalId: "3000000001", purchase: start, expires: start.plus(days: 30),
            signed: start)
        let posted = try await Self.send(
            application, .post, "/v1/apps/secret-only/customers/carol/transactions", key: admin,
            json: ["signedTransaction": jws])
        #expect(posted.status == 200)
        #expect((posted.json["entitlements"] as? [String: Any])?["pro"] != nil)

        let byId = try await Self.send(
            application, .post, "/v1/apps/secret-only/customers/carol/transactions", key: admin,
            json: ["transactionId": "3000000001"])
        #expect(byId.status == 409)
        #expect((byId.json["error"] as? [String: Any])?["code"] as? String == "app_store_not_configured")
        await stop()
    }

    /// Found: the `share` transfer policy was refused with an undocumented 422; it is now
    /// supported, and createApp answers it like any other policy.
    @Test func sharePolicyIsAccepted() async throws {
        let (application, _, stop) = try await Self.liveApplication()
        let created = try await Self.send(
            application, .post, "/v1/admin/apps", key: ServerHarness.adminKey,
            json: ["id": "shares", "bundleId": "com.example", "environments": ["Sandbox"], "transferPolicy": "share"])
        #expect(created.status == 201)
        await stop()
    }

    /// The document says what the handlers enforce where JSON Schema can say it: `limit` is
    /// positive, an app names at least one environment, app keys are public or secret and the
    /// admin route makes admin keys only.
    @Test func documentStatesTheEnforcedConstraints() async throws {
        let (application, _, stop) = try await Self.liveApplication()
        let document = try #require(
            try JSONSerialization.jsonObject(with: AppStoreJSON.encode(application.openAPIDocument))
                as? [String: Any])
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        func property(_ schema: String, _ name: String) -> [String: Any]? {
            ((schemas[schema] as? [String: Any])?["properties"] as? [String: Any])?[name] as? [String: Any]
        }
        #expect(property("AppInput", "environments")?["minItems"] as? Int == 1)
        #expect(property("AppKeyInput", "kind")?["enum"] as? [String] == ["public", "secret"])
        #expect(property("AdminKeyInput", "kind")?["enum"] as? [String] == ["admin"])
        #expect(schemas["KeyInput"] == nil)
        let events = try #require(
            ((document["paths"] as? [String: Any])?["/v1/apps/{appId}/customers/{appUserId}/events"]
                as? [String: Any])?["get"] as? [String: Any])
        let limit = try #require(
            (events["parameters"] as? [[String: Any]])?.first { $0["name"] as? String == "limit" })
        let pattern = try #require((limit["schema"] as? [String: Any])?["pattern"] as? String)
        #expect(pattern == "^[1-9][0-9]{0,17}$")
        await stop()
    }
}
