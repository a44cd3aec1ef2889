import AppStoreModels
import Foundation
import SecretSealing
import Storage
import StorekeeperIngestion
import Testing

/// Issue 15: the admin API for an app's Google Play side: set and read it, the key sealed at
/// rest and never answered, merges and versions like the app's own PUT, one package per app.
@Suite struct GooglePlaySettingsTests {
    static let key = """
        {"type":"service_account","client_email":"play@example.iam.gserviceaccount.com",\
        "private_key":"-----BEGIN PRIVATE KEY-----\\nMIIB\\n-----END PRIVATE KEY-----\\n"}
        """

    @Test func setReadMergeAndRefuseASharedPackage() async throws {
        let harness = try await ServerHarness()
        let admin = ServerHarness.adminKey
        let app = try await harness.createApp()
        let path = "/v1/admin/apps/\(app.appId)/googleplay"
        #expect(try await harness.request("GET", path, key: admin).status == 404)
        // The package name is required the first time, and checked.
        #expect(try await harness.request("PUT", path, key: admin, json: ["rtdnAudience": "aud"]).status == 400)
        #expect(
            try await harness.request("PUT", path, key: admin, json: ["packageName": "not a package"]).status == 400)
        #expect(
            try await harness.request(
                "PUT", path, key: admin, json: ["packageName": "com.example.play", "serviceAccountKey": "{}"]
            ).status == 400)

        let created = try await harness.request(
            "PUT", path, key: admin,
            json: [
                "packageName": "com.example.play", "serviceAccountKey": Self.key,
                "rtdnAudience": "https://storekeeper.example/push", "pushServiceAccountEmail": "push@example.iam",
            ])
        #expect(created.status == 200)
        #expect(created.header("ETag") == "\"1\"")
        #expect(
            created.json as NSDictionary == [
                "appId": app.appId, "packageName": "com.example.play", "hasServiceAccountKey": true,
                "rtdnAudience": "https://storekeeper.example/push", "pushServiceAccountEmail": "push@example.iam",
                "acknowledgePurchases": true, "readOrderRevenue": false, "version": 1,
            ])
        #expect(!created.text.contains("private_key"))

        // Sealed at rest, bound to the app; it opens to what was sent.
        let stored = try await harness.store.read { try $0.playAppSettings(appId: app.appId) }
        let sealed = try #require(stored?.serviceAccountKey)
        #expect(SealedSecret.isSealed(sealed))
        #expect(try harness.secrets.opened(stored!).serviceAccountKey == Self.key)

        // A merge keeps what is not sent; If-Match on a stale version is 412.
        let merged = try await harness.request(
            "PUT", path, key: admin, json: ["acknowledgePurchases": false, "readOrderRevenue": true],
            headers: ["If-Match": "\"1\""])
        #expect(merged.status == 200)
        #expect(merged.json["acknowledgePurchases"] as? Bool == false)
        #expect(merged.json["readOrderRevenue"] as? Bool == true)
        #expect(try await harness.store.read { try $0.playAppSettings(appId: app.appId) }?.readOrderRevenue == true)
        #expect(merged.json["hasServiceAccountKey"] as? Bool == true)
        #expect(merged.json["packageName"] as? String == "com.example.play")
        #expect(
            try await harness.request(
                "PUT", path, key: admin, json: ["acknowledgePurchases": true], headers: ["If-Match": "\"1\""]
            ).status == 412)
        let read = try await harness.request("GET", path, key: admin)
        #expect(read.status == 200)
        #expect(read.header("ETag") == "\"2\"")
        #expect(!read.text.contains("private_key"))

        // Another app in the same environment cannot take the package.
        let other = try await harness.createApp()
        let taken = try await harness.request(
            "PUT", "/v1/admin/apps/\(other.appId)/googleplay", key: admin, json: ["packageName": "com.example.play"])
        #expect(taken.status == 409)
        #expect(taken.text.contains("package_name_taken"))

        // Rotation reseals the key under the new secrets key; it still opens to what was sent.
        let oldKey = try #require(harness.secrets.sealer?.key)
        let newKey = try SecretsKey.generate()
        let rotating = StoredSecrets(sealer: SecretSealer(key: newKey, alsoOpening: [oldKey]))
        let inventory = try await harness.store.read { try StoredSecretsInventory(reading: $0) }
        #expect(inventory.sealed[oldKey.id]?.contains(StoredSecrets.playServiceAccountKey(appId: app.appId)) == true)
        _ = try await rotating.resealAll(harness.store, at: harness.clock.now)
        let rotated = try #require(try await harness.store.read { try $0.playAppSettings(appId: app.appId) })
        #expect(try SealedSecret(parsing: rotated.serviceAccountKey!).keyId == newKey.id)
        #expect(try StoredSecrets(sealer: SecretSealer(key: newKey)).opened(rotated).serviceAccountKey == Self.key)
        #expect(rotated.version == 3)
        // The reseal keeps the order-revenue switch.
        #expect(rotated.readOrderRevenue == true)
        await harness.stop()
    }

    /// Review finding: the package was claimed in the app's environments when its Play side
    /// was saved and never again. Changing the app's environments re-claims it; an environment
    /// another app holds the package in is 409 `package_name_taken` and changes nothing.
    @Test func thePackageFollowsTheAppsEnvironments() async throws {
        let harness = try await ServerHarness()
        let admin = ServerHarness.adminKey
        let app = try await harness.createApp()
        let other = try await harness.createApp(settings: ["environments": ["Production"], "appAppleId": 2222])
        #expect(
            try await harness.request(
                "PUT", "/v1/admin/apps/\(app.appId)/googleplay", key: admin, json: ["packageName": "com.example.play"]
            ).status == 200)
        #expect(
            try await harness.request(
                "PUT", "/v1/admin/apps/\(app.appId)", key: admin,
                json: ["environments": ["Sandbox", "Production"], "appAppleId": 1111]
            ).status == 200)
        var owners = try await harness.store.read { reader in
            try [AppStoreEnvironment.production, .sandbox].map {
                try reader.appId(playPackageName: "com.example.play", environment: $0)
            }
        }
        #expect(owners == [app.appId, app.appId])
        // Production dropped: the other app may take the package there; taking it back is refused.
        #expect(
            try await harness.request(
                "PUT", "/v1/admin/apps/\(app.appId)", key: admin, json: ["environments": ["Sandbox"]]
            ).status == 200)
        #expect(
            try await harness.request(
                "PUT", "/v1/admin/apps/\(other.appId)/googleplay", key: admin, json: ["packageName": "com.example.play"]
            ).status == 200)
        let refused = try await harness.request(
            "PUT", "/v1/admin/apps/\(app.appId)", key: admin,
            json: ["environments": ["Sandbox", "Production"], "appAppleId": 1111])
        #expect(refused.status == 409)
        #expect((refused.json["error"] as? [String: Any])?["code"] as? String == "package_name_taken")
        let shown = try await harness.request("GET", "/v1/admin/apps/\(app.appId)", key: admin)
        #expect(shown.json["environments"] as? [String] == ["Sandbox"])
        owners = try await harness.store.read { reader in
            try [AppStoreEnvironment.production, .sandbox].map {
                try reader.appId(playPackageName: "com.example.play", environment: $0)
            }
        }
        #expect(owners == [other.appId, app.appId])
        await harness.stop()
    }
}
