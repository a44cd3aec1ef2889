import Foundation
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Versioned admin resources over HTTP (issue 17, admin writes): every app, catalog and webhook
/// endpoint answers its version as `version` and `ETag`; `If-Match` with a stale version is 412
/// `version_mismatch` and changes nothing; creating an app id that exists is 409 `app_exists`
/// and changes nothing.
@Suite(.serialized)
struct AdminWriteTests {
    static let admin = ServerHarness.adminKey

    /// Runs `body` with a SQLite harness, stopping it whatever happens.
    static func withHarness(_ body: (ServerHarness) async throws -> Void) async throws {
        let harness = try await ServerHarness(webhookAllowedDestinations: ["127.0.0.1"])
        do {
            try await body(harness)
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    /// The minimal app body: a Sandbox app trusting the harness's CA.
    static func appBody(_ harness: ServerHarness, id: String, bundleId: String = "com.example") -> [String: Any] {
        ["id": id, "bundleId": bundleId, "environments": ["Sandbox"], "rootCertificatesPEM": [harness.ca.root.pem]]
    }

    @Test("an app's ETag is its version: created 1, one more per PUT; a stale If-Match is 412 and changes nothing")
    func appETagRoundTrip() async throws {
        try await Self.withHarness { harness in
            let id = "versioned-\(uniqueDigits())"
            let path = "/v1/admin/apps/\(id)"
            let created = try await harness.request(
                "POST", "/v1/admin/apps", key: Self.admin, json: Self.appBody(harness, id: id))
            #expect(created.status == 201)
            #expect(created.header("ETag") == "\"1\"")
            #expect(created.json["version"] as? Int == 1)

            let read = try await harness.request("GET", path, key: Self.admin)
            #expect(read.status == 200)
            #expect(read.header("ETag") == "\"1\"")
            #expect(read.json["version"] as? Int == 1)

            // The ETag sent back as If-Match: applied, version 2.
            let first = try await harness.request(
                "PUT", path, key: Self.admin, json: ["onlineVerification": true], headers: ["If-Match": "\"1\""])
            #expect(first.status == 200)
            #expect(first.header("ETag") == "\"2\"")
            #expect(first.json["version"] as? Int == 2)
            #expect(first.json["onlineVerification"] as? Bool == true)

            // The same If-Match again is stale now: 412 naming version 2, and nothing changes.
            let stale = try await harness.request(
                "PUT", path, key: Self.admin, json: ["transferPolicy": "share"], headers: ["If-Match": "\"1\""])
            #expect(stale.status == 412)
            #expect(stale.errorCode == "version_mismatch")
            #expect(stale.header("ETag") == "\"2\"")
            let message = (stale.json["error"] as? [String: Any])?["message"] as? String
            #expect(message?.contains("current version is 2") == true, "\(stale.text)")
            let after = try await harness.request("GET", path, key: Self.admin)
            #expect(after.header("ETag") == "\"2\"")
            #expect(after.json["transferPolicy"] as? String == "transfer_to_newest")

            // A weak tag never matches (strong comparison); a list matches when one tag does;
            // `*` matches any version; without If-Match the change applies to the current one.
            let weak = try await harness.request(
                "PUT", path, key: Self.admin, json: ["transferPolicy": "share"], headers: ["If-Match": "W/\"2\""])
            #expect(weak.status == 412)
            #expect(weak.errorCode == "version_mismatch")
            let listed = try await harness.request(
                "PUT", path, key: Self.admin, json: ["transferPolicy": "share"],
                headers: ["If-Match": "\"7\", W/\"1\", \"2\""])
            #expect(listed.status == 200)
            #expect(listed.header("ETag") == "\"3\"")
            let any = try await harness.request(
                "PUT", path, key: Self.admin, json: ["legacyReceiptFlow": true], headers: ["If-Match": "*"])
            #expect(any.status == 200)
            #expect(any.header("ETag") == "\"4\"")
            let unconditional = try await harness.request(
                "PUT", path, key: Self.admin, json: ["answerConsumptionRequests": true])
            #expect(unconditional.status == 200)
            #expect(unconditional.header("ETag") == "\"5\"")
            #expect(unconditional.json["transferPolicy"] as? String == "share")
            #expect(unconditional.json["legacyReceiptFlow"] as? Bool == true)
            #expect(unconditional.json["onlineVerification"] as? Bool == true)

            // The list shows each app's version too.
            let list = try await harness.request("GET", "/v1/admin/apps", key: Self.admin)
            let listedApp = (list.json["apps"] as? [[String: Any]])?.first { $0["id"] as? String == id }
            #expect(listedApp?["version"] as? Int == 5)
        }
    }

    @Test("If-Match that is not * or a list of entity tags is 400 invalid_if_match and changes nothing")
    func malformedIfMatch() async throws {
        try await Self.withHarness { harness in
            let id = "malformed-\(uniqueDigits())"
            let path = "/v1/admin/apps/\(id)"
            _ = try await harness.request(
                "POST", "/v1/admin/apps", key: Self.admin, json: Self.appBody(harness, id: id))
            for value in ["1", "\"1", "*, \"1\"", ",", "\"a b\"", String(repeating: "\"1\",", count: 300)] {
                let refused = try await harness.request(
                    "PUT", path, key: Self.admin, json: ["onlineVerification": true], headers: ["If-Match": value])
                #expect(refused.status == 400, "If-Match: \(value)")
                #expect(refused.errorCode == "invalid_if_match", "If-Match: \(value)")
            }
            let unchanged = try await harness.request("GET", path, key: Self.admin)
            #expect(unchanged.header("ETag") == "\"1\"")
            #expect(unchanged.json["onlineVerification"] as? Bool == false)
        }
    }

    @Test("If-Match on an unknown app is 404 app_not_found, not 412")
    func ifMatchOnUnknownApp() async throws {
        try await Self.withHarness { harness in
            let missing = try await harness.request(
                "PUT", "/v1/admin/apps/missing-\(uniqueDigits())", key: Self.admin, json: ["onlineVerification": false],
                headers: ["If-Match": "\"1\""])
            #expect(missing.status == 404)
            #expect(missing.errorCode == "app_not_found")
        }
    }

    @Test("creating an app id that exists is 409 app_exists and keeps the first app as it was")
    func duplicateCreateIsConflict() async throws {
        try await Self.withHarness { harness in
            let id = "taken-\(uniqueDigits())"
            let first = try await harness.request(
                "POST", "/v1/admin/apps", key: Self.admin, json: Self.appBody(harness, id: id, bundleId: "com.first"))
            #expect(first.status == 201)
            let second = try await harness.request(
                "POST", "/v1/admin/apps", key: Self.admin, json: Self.appBody(harness, id: id, bundleId: "com.second"))
            #expect(second.status == 409)
            #expect(second.errorCode == "app_exists")
            let stored = try await harness.request("GET", "/v1/admin/apps/\(id)", key: Self.admin)
            #expect(stored.json["bundleId"] as? String == "com.first")
            #expect(stored.header("ETag") == "\"1\"")
        }
    }

    @Test("a catalog's ETag is 0 before the first PUT; If-Match \"0\" creates it once; a stale one is 412")
    func catalogVersions() async throws {
        try await Self.withHarness { harness in
            let id = "catalog-\(uniqueDigits())"
            _ = try await harness.request(
                "POST", "/v1/admin/apps", key: Self.admin, json: Self.appBody(harness, id: id))
            let key =
                try await harness.request(
                    "POST", "/v1/admin/apps/\(id)/keys", key: Self.admin, json: ["kind": "secret"]
                ).json["key"] as! String
            let path = "/v1/apps/\(id)/catalog"
            func catalog(_ productId: String) -> [String: Any] {
                ["products": [["productId": productId, "kind": "NON_CONSUMABLE", "entitlementIds": ["pro"]]]]
            }
            let empty = try await harness.request("GET", path, key: key)
            #expect(empty.status == 200)
            #expect(empty.header("ETag") == "\"0\"")
            #expect(empty.json["version"] as? Int == 0)

            let created = try await harness.request(
                "PUT", path, key: key, json: catalog("com.example.a"), headers: ["If-Match": "\"0\""])
            #expect(created.status == 200)
            #expect(created.header("ETag") == "\"1\"")
            #expect(created.json["version"] as? Int == 1)
            let again = try await harness.request(
                "PUT", path, key: key, json: catalog("com.example.b"), headers: ["If-Match": "\"0\""])
            #expect(again.status == 412)
            #expect(again.errorCode == "version_mismatch")
            #expect(again.header("ETag") == "\"1\"")
            let kept = try await harness.request("GET", path, key: key)
            #expect(kept.header("ETag") == "\"1\"")
            #expect(
                (kept.json["products"] as? [[String: Any]])?.map { $0["productId"] as? String } == ["com.example.a"])

            // A PUT without If-Match replaces the catalog whole.
            let replaced = try await harness.request("PUT", path, key: key, json: catalog("com.example.c"))
            #expect(replaced.status == 200)
            #expect(replaced.header("ETag") == "\"2\"")
            let read = try await harness.request("GET", path, key: key)
            #expect(
                (read.json["products"] as? [[String: Any]])?.map { $0["productId"] as? String } == ["com.example.c"])
            #expect(read.header("ETag") == "\"2\"")
        }
    }

    /// Found by hand: a webhook URL with a NUL passed Foundation's URL parser and the
    /// destination policy, and the store's refusal of the NUL answered 503 "retry later"; a
    /// catalog took a NUL or a line break in its ids as they were.
    @Test("a control character in a webhook URL or a catalog id is a 400 that changes nothing")
    func controlCharactersAreRefused() async throws {
        try await Self.withHarness { harness in
            let app = try await harness.createApp()
            for url in [
                "http://127.0.0.1:9/a\u{0}b", "http://127.0.0.1:9/a\nb", "http://127.0.0.1:9/a b",
                "http://127.0.0.1:9/\u{7F}",
            ] {
                let created = try await harness.request(
                    "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": url])
                #expect(created.status == 400, "\(url.debugDescription)")
                #expect(created.errorCode == "invalid_body", "\(url.debugDescription)")
                #expect(
                    (created.json["error"] as? [String: Any])?["message"] as? String
                        == "url refused (destination.invalidURL): url must not contain spaces or control characters.",
                    "\(url.debugDescription)")
            }
            // Checked at registration only: an endpoint stored before keeps its deliveries.
            #expect((try? WebhookDestination.parse("http://127.0.0.1:9/a b")) != nil)
            let listed = try await harness.request("GET", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey)
            #expect((listed.json["endpoints"] as? [Any])?.count == 0)

            let path = "/v1/apps/\(app.appId)/catalog"
            let before = try await harness.request("GET", path, key: app.secretKey)
            let products: [[String: Any]] = [
                ["productId": "p\u{0}q", "kind": "CONSUMABLE", "entitlementIds": [String]()],
                ["productId": "p\nq", "kind": "CONSUMABLE", "entitlementIds": [String]()],
                ["productId": "pq", "kind": "NON_CONSUMABLE", "entitlementIds": ["pro\u{0}"]],
                ["productId": "pq", "kind": "NON_CONSUMABLE", "entitlementIds": [""]],
                ["productId": "pq", "kind": "NON_CONSUMABLE", "entitlementIds": [String(repeating: "e", count: 256)]],
            ]
            for product in products {
                let put = try await harness.request("PUT", path, key: app.secretKey, json: ["products": [product]])
                #expect(put.status == 400, "\(product)")
                #expect(put.errorCode == "invalid_body", "\(product)")
                let message = (put.json["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(message.hasPrefix("Every "), "\(product): \(message)")
                #expect(message.hasSuffix("without control characters."), "\(product): \(message)")
            }
            let after = try await harness.request("GET", path, key: app.secretKey)
            #expect(after.header("ETag") == before.header("ETag"))
            #expect(after.text == before.text)
            let longest = try await harness.request(
                "PUT", path, key: app.secretKey,
                json: [
                    "products": [
                        [
                            "productId": String(repeating: "p", count: 255), "kind": "NON_CONSUMABLE",
                            "entitlementIds": [String(repeating: "e", count: 255)],
                        ]
                    ]
                ])
            #expect(longest.status == 200)
        }
    }

    @Test("a webhook endpoint's ETag is its version; a stale If-Match is 412 and changes nothing")
    func webhookEndpointVersions() async throws {
        try await Self.withHarness { harness in
            let app = try await harness.createApp()
            let created = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": "http://127.0.0.1:9/a"])
            #expect(created.status == 201)
            #expect(created.header("ETag") == "\"1\"")
            #expect(created.json["version"] as? Int == 1)
            let endpointId = try #require(created.json["id"] as? String)
            let path = "/v1/apps/\(app.appId)/webhooks/\(endpointId)"

            let disabled = try await harness.request(
                "PUT", path, key: app.secretKey, json: ["enabled": false], headers: ["If-Match": "\"1\""])
            #expect(disabled.status == 200)
            #expect(disabled.header("ETag") == "\"2\"")
            #expect(disabled.json["version"] as? Int == 2)
            let stale = try await harness.request(
                "PUT", path, key: app.secretKey, json: ["url": "http://127.0.0.1:9/b"], headers: ["If-Match": "\"1\""])
            #expect(stale.status == 412)
            #expect(stale.errorCode == "version_mismatch")
            #expect(stale.header("ETag") == "\"2\"")

            let list = try await harness.request("GET", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey)
            let endpoint = (list.json["endpoints"] as? [[String: Any]])?.first
            #expect(endpoint?["url"] as? String == "http://127.0.0.1:9/a")
            #expect(endpoint?["enabled"] as? Bool == false)
            #expect(endpoint?["version"] as? Int == 2)

            let missing = try await harness.request(
                "PUT", "/v1/apps/\(app.appId)/webhooks/we_missing", key: app.secretKey, json: ["enabled": true],
                headers: ["If-Match": "\"1\""])
            #expect(missing.status == 404)
            #expect(missing.errorCode == "endpoint_not_found")
        }
    }
}
