import AppStoreModels
import Entitlements
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// ETag / 304, malformed input, content types, path traversal, health, readiness, metrics and
/// the OpenAPI document against the router.
@Suite(.serialized) struct HTTPBehaviourTests {
    @Test func customerInfoHonoursIfNoneMatch() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let path = "/v1/apps/\(app.appId)/customers/bob"
        let first = try await harness.request("GET", path, key: app.publicKey)
        #expect(first.status == 200)
        let etag = try #require(first.header("ETag"))
        let again = try await harness.request("GET", path, key: app.publicKey, headers: ["If-None-Match": etag])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        let stale = try await harness.request("GET", path, key: app.publicKey, headers: ["If-None-Match": "\"other\""])
        #expect(stale.status == 200)
    }

    /// A GET's ETag is the digest stored with the state when there is one: nothing is hashed on
    /// the read. Shown with a digest that is not the body's, which only the stored one can give.
    @Test func customerInfoETagIsTheStoredDigest() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let now = harness.clock.now
        let info = CustomerInfo(customerId: "carol", environment: .sandbox, evaluatedAt: now)
        let json = String(decoding: AppStoreJSON.encode(info), as: UTF8.self)
        let stored = "00112233445566778899aabbccddeeff"
        _ = try await harness.store.write { tx in
            let customer = try tx.ensureCustomer(appId: app.appId, appUserId: "carol", at: now)
            return try tx.saveCustomerInfo(
                info, json: json, digest: stored, customerId: customer.id, expectedVersion: nil, at: now)
        }
        let path = "/v1/apps/\(app.appId)/customers/carol?environment=Sandbox"
        let first = try await harness.request("GET", path, key: app.publicKey)
        #expect(first.status == 200)
        #expect(first.body == Data(json.utf8))
        #expect(first.header("ETag") == "\"\(stored)\"")
        let again = try await harness.request(
            "GET", path, key: app.publicKey, headers: ["If-None-Match": "\"\(stored)\""])
        #expect(again.status == 304)
        // The body's own digest (what a state saved without one answers) no longer matches.
        let hashed = "\"\(CustomerInfoDigest.of(Data(json.utf8)))\""
        let other = try await harness.request("GET", path, key: app.publicKey, headers: ["If-None-Match": hashed])
        #expect(other.status == 200)
    }

    @Test func malformedRequestsAre4xx() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let transactions = "/v1/apps/\(app.appId)/customers/alice/transactions"
        let badJSON = try await harness.request(
            "POST", transactions, key: app.publicKey, body: Data("{nope".utf8),
            headers: ["Content-Type": "application/json"])
        #expect(badJSON.status == 400)
        #expect(badJSON.errorCode == "invalid_json")
        let wrongType = try await harness.request(
            "POST", transactions, key: app.publicKey, body: Data("signedTransaction=x".utf8),
            headers: ["Content-Type": "application/x-www-form-urlencoded"])
        #expect(wrongType.status == 415)
        let wrongShape = try await harness.request("POST", transactions, key: app.publicKey, json: ["transactionId": 5])
        #expect(wrongShape.status == 400)
        #expect(wrongShape.errorCode == "invalid_body")
        let neither = try await harness.request("POST", transactions, key: app.publicKey, json: [String: String]())
        #expect(neither.status == 400)
        let notification = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/notifications/appstore", body: Data("[]".utf8),
            headers: ["Content-Type": "text/plain"])
        #expect(notification.status == 415)

        for traversal in [
            "/v1/apps/\(app.appId)/customers/..%2F..%2Fetc", "/v1/apps/\(app.appId)/customers/%2e%2e",
            "/v1/apps/..%2Fx/customers/a", "/v1/apps/\(app.appId)/customers/a%00b",
            "/v1/apps/\(app.appId)/customers/a%2Fb",
        ] {
            let response = try await harness.request("GET", traversal, key: app.publicKey)
            #expect((400..<500).contains(response.status), "\(traversal) → \(response.status) \(response.text)")
            #expect(response.errorCode != nil)
        }
        #expect(try await harness.request("GET", "/v1/nothing-here").status == 404)
        #expect(try await harness.request("DELETE", "/healthz").status == 405)
        let badCursor = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/customers/alice/events?cursor=abc", key: app.secretKey)
        #expect(badCursor.status == 400)
    }

    @Test func operationsEndpoints() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        #expect(try await harness.request("GET", "/healthz").json["status"] as? String == "ok")
        let ready = try await harness.request("GET", "/readyz")
        #expect(ready.status == 200)
        #expect(ready.json["migrations"] as? String == "current")
        _ = try await harness.request("GET", "/healthz")
        let metrics = try await harness.request("GET", "/metrics")
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
        #expect(
            metrics.text.contains("storekeeper_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"}"))
        #expect(
            metrics.text.contains(
                "storekeeper_http_request_duration_seconds_bucket{route=\"/healthz\",method=\"GET\",le=\"+Inf\"}"))
        #expect(metrics.text.contains("storekeeper_database_duration_seconds"))
    }

    /// Every route the router serves is in /openapi.json and every documented operation is
    /// answered by a route (never 404/405 from the router).
    @Test func openAPIDocumentMatchesTheRouter() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let response = try await harness.request("GET", "/openapi.json")
        #expect(response.status == 200)
        #expect(response.json["openapi"] as? String == "3.1.0")
        let paths = try #require(response.json["paths"] as? [String: [String: Any]])
        var documented: Set<String> = []
        for (path, operations) in paths {
            for method in operations.keys { documented.insert("\(method.uppercased()) \(path)") }
        }
        let routed = Set(harness.application.routes.map { "\($0.method.rawValue) \($0.path)" })
        #expect(documented == routed)
        // The router itself answers each documented operation (auth may refuse, routing may not).
        for operation in documented {
            let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
            let concrete = parts[1].replacingOccurrences(of: "{appId}", with: "some-app")
                .replacingOccurrences(of: "{appUserId}", with: "someone")
                .replacingOccurrences(of: "{endpointId}", with: "we_x").replacingOccurrences(
                    of: "{deliveryId}", with: "1"
                )
                .replacingOccurrences(of: "{keyId}", with: "key_x")
            let answer = await harness.application.responder.respond(
                to: HTTPRequest(method: HTTPMethod(parts[0]), path: concrete))
            #expect(answer.status.code != 405, "\(operation)")
            if answer.status.code == 404 {
                let code =
                    (try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
                    .flatMap { $0["error"] as? [String: Any] }?["code"] as? String
                #expect(code != "not_found", "\(operation) is not routed")
            }
        }
        let schemas = (response.json["components"] as? [String: Any])?["schemas"] as? [String: Any]
        #expect(schemas?["CustomerInfo"] != nil)
        #expect(schemas?["Error"] != nil)
        // Every reference names a schema that is there.
        func references(_ value: Any) -> [String] {
            if let object = value as? [String: Any] {
                return (object["$ref"] as? String).map { [$0] } ?? object.values.flatMap(references)
            }
            return (value as? [Any])?.flatMap(references) ?? []
        }
        let named = Set(
            references(response.json).map { $0.replacingOccurrences(of: "#/components/schemas/", with: "") })
        #expect(named.isSuperset(of: ["KeyList", "WebhookTestResult", "NotificationPage"]))
        let known = Set((schemas ?? [:]).keys)
        #expect(named.subtracting(known).isEmpty)
    }

    @Test func connectionProtectionSettings() async throws {
        let defaults = ServerConfiguration()
        #expect(defaults.requestHeadTimeoutSeconds == 10)
        #expect(defaults.minBodyBytesPerSecond == 1024)
        #expect(defaults.maxConnectionsPerAddress == 256)
        let loaded = try ServerConfiguration.load(environment: [
            "STOREKEEPER_REQUEST_HEAD_TIMEOUT_SECONDS": "7", "STOREKEEPER_MIN_BODY_BYTES_PER_SECOND": "2048",
            "STOREKEEPER_MAX_CONNECTIONS_PER_ADDRESS": "32", "STOREKEEPER_CONNECTION_LIMIT": "400",
        ])
        let (store, cleanup) = try await TestDatabase.sqlite.open()
        let http = try StorekeeperApplication(configuration: loaded, store: store).httpConfiguration()
        #expect(http.connectionLimit == 400)
        #expect(http.requestHeadTimeout == .seconds(7))
        // The body's grace period is the head timeout.
        #expect(http.minimumBodyRate == HTTPServer.MinimumBodyRate(bytesPerSecond: 2048, grace: .seconds(7)))
        #expect(http.maxConnectionsPerAddress == 32)
        let noMinimum = try ServerConfiguration.load(environment: ["STOREKEEPER_MIN_BODY_BYTES_PER_SECOND": "0"])
        #expect(
            try StorekeeperApplication(configuration: noMinimum, store: store).httpConfiguration().minimumBodyRate
                == nil)
        for (variable, value) in [
            ("STOREKEEPER_REQUEST_HEAD_TIMEOUT_SECONDS", "0"), ("STOREKEEPER_MIN_BODY_BYTES_PER_SECOND", "-1"),
            ("STOREKEEPER_MAX_CONNECTIONS_PER_ADDRESS", "many"),
        ] {
            #expect(throws: ServerConfigurationError.self, "\(variable)=\(value)") {
                try ServerConfiguration.load(environment: [variable: value])
            }
        }
        await store.close()
        cleanup()
    }

    @Test func configurationLayers() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sk-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("config.json")
        try Data(#"{"listen": "0.0.0.0:9000", "maxBodySize": 2048, "accessLog": false}"#.utf8).write(to: file)
        let loaded = try ServerConfiguration.load(
            file: file.path,
            environment: ["STOREKEEPER_MAX_BODY_SIZE": "4096", "STOREKEEPER_DATABASE_URL": "postgres://x/y"],
            overrides: ["listen": "127.0.0.1:9100"])
        #expect(loaded.listen == "127.0.0.1:9100")
        #expect(loaded.maxBodySize == 4096)
        #expect(loaded.accessLog == false)
        #expect(loaded.databaseURL == "postgres://x/y")
        #expect(try loaded.listenAddress() == ("127.0.0.1", 9100))
        #expect(ServerConfiguration().resolvedDatabaseURL == "sqlite:data/storekeeper.sqlite")
        #expect(
            ServerConfiguration.environmentVariable(for: "webhookPollMilliseconds")
                == "STOREKEEPER_WEBHOOK_POLL_MILLISECONDS")
        try Data(#"{"lisen": "x"}"#.utf8).write(to: file)
        #expect(throws: ServerConfigurationError.self) {
            try ServerConfiguration.load(file: file.path, environment: [:])
        }
        #expect(throws: ServerConfigurationError.self) {
            try ServerConfiguration.load(environment: ["STOREKEEPER_LISTEN": "nonsense"])
        }
    }
}
