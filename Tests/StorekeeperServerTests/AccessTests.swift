import Foundation
import StorekeeperServer
import StorekeeperTesting
import Testing

/// API keys: public vs secret vs admin, and no key reaching another app's data.
@Suite(.serialized) struct AccessTests {
    @Test func keysStayWithinTheirApp() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let first = try await harness.createApp()
        let second = try await harness.createApp()
        let mine = "/v1/apps/\(first.appId)/customers/alice"
        let theirs = "/v1/apps/\(second.appId)/customers/alice"

        #expect(try await harness.request("GET", mine).status == 401)
        #expect(try await harness.request("GET", mine, key: "sk_pub_made-up").status == 401)
        #expect(try await harness.request("GET", mine, key: first.publicKey).status == 200)
        #expect(try await harness.request("GET", mine, key: first.secretKey).status == 200)
        #expect(try await harness.request("GET", theirs, key: first.publicKey).status == 403)
        #expect(try await harness.request("GET", theirs, key: first.secretKey).status == 403)
        #expect(try await harness.request("GET", "\(theirs)/events", key: first.secretKey).status == 403)
        #expect(
            try await harness.request("GET", "/v1/apps/\(second.appId)/catalog", key: first.secretKey).status == 403)

        // The public key reads the customer but not its events, catalog or webhooks.
        #expect(try await harness.request("GET", "\(mine)/events", key: first.publicKey).status == 403)
        #expect(try await harness.request("GET", "/v1/apps/\(first.appId)/catalog", key: first.publicKey).status == 403)
        #expect(
            try await harness.request("GET", "/v1/apps/\(first.appId)/webhooks", key: first.publicKey).status == 403)

        // Admin routes need an admin key.
        #expect(try await harness.request("GET", "/v1/admin/apps", key: first.secretKey).status == 403)
        #expect(try await harness.request("GET", "/v1/admin/apps", key: ServerHarness.adminKey).status == 200)

        // A stored admin key works; a revoked key stops working.
        let created = try await harness.request(
            "POST", "/v1/admin/keys", key: ServerHarness.adminKey, json: ["kind": "admin"])
        #expect(created.status == 201)
        let adminKey = try #require(created.json["key"] as? String)
        #expect(try await harness.request("GET", "/v1/admin/apps", key: adminKey).status == 200)
        let keyId = try #require(created.json["id"] as? String)
        #expect(
            try await harness.request("DELETE", "/v1/admin/keys/\(keyId)", key: ServerHarness.adminKey).status == 204)
        #expect(try await harness.request("GET", "/v1/admin/apps", key: adminKey).status == 401)

        // Keys are stored hashed: the secret is nowhere in the store's key table.
        let record = try await harness.store.read { try $0.apiKey(hash: APIKeys.hash(adminKey)) }
        #expect(record?.hash == APIKeys.hash(adminKey))
        #expect(record?.hash != adminKey)
    }

    @Test func adminViewsHideSecrets() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let view = try await harness.request("GET", "/v1/admin/apps/\(app.appId)", key: ServerHarness.adminKey)
        #expect(view.status == 200)
        #expect(view.json["hasSharedSecret"] as? Bool == true)
        #expect(!view.text.contains("shared-secret"))
        let share = try await harness.request(
            "PUT", "/v1/admin/apps/\(app.appId)", key: ServerHarness.adminKey, json: ["transferPolicy": "share"])
        #expect(share.status == 200)
        #expect(share.json["transferPolicy"] as? String == "share")
        let keep = try await harness.request(
            "PUT", "/v1/admin/apps/\(app.appId)", key: ServerHarness.adminKey,
            json: ["transferPolicy": "keep_with_first"])
        #expect(keep.json["transferPolicy"] as? String == "keep_with_first")
        #expect(keep.json["hasSharedSecret"] as? Bool == true)
    }
}
