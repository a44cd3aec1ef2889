import Foundation
import GooglePlaySimulator
import HTTPServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 15: `storekeeper simulate run` drives the Google Play simulator for a scenario file's
/// `play_store` steps against a real `storekeeper serve`, through the server's real Play push
/// route: the server reads each purchase from the simulator's Play Developer API (its
/// `playApiBaseURL`), trusts its push tokens (`playPushKeySet`) and holds the service account of
/// the run's data directory. Exact output, then exact CustomerInfo and events.
struct SimulatePlayCLITests {
    static let adminKey = "cli-admin-key-0123456789"
    static let package = "com.example.cliplay"

    /// One month is 20 s: the six-day period is 4 s of wall time.
    static let scenario = """
        {"name": "play journey", "clock": {"mode": "accelerated", "monthSeconds": 20},
         "app": {"bundleId": "com.example.cliplay", "appAppleId": 1, "products": [
           {"productId": "monthly", "kind": "autoRenewable", "groupId": "G1", "level": 1, "period": "P1M",
            "prices": [{"storefront": "USA", "currency": "USD", "price": 5990}]}]},
         "customers": [{"id": "paula", "store": "play_store"}],
         "steps": [
           {"action": "purchase", "customer": "paula", "productId": "monthly", "days": 6,
            "expect": {"notifications": [{"type": "SUBSCRIPTION_PURCHASED", "customer": "paula"}]}},
           {"app": "postTransaction", "customer": "paula"},
           {"action": "renew", "customer": "paula", "productId": "monthly",
            "expect": {"notifications": [{"type": "SUBSCRIPTION_RENEWED"}],
                       "subscriptions": [{"customer": "paula", "productId": "monthly",
                                          "status": "SUBSCRIPTION_STATE_ACTIVE"}]}},
           {"action": "cancel", "customer": "paula", "productId": "monthly",
            "expect": {"notifications": [{"type": "SUBSCRIPTION_CANCELED"}]}},
           {"action": "expire", "customer": "paula", "productId": "monthly",
            "expect": {"notifications": [{"type": "SUBSCRIPTION_EXPIRED"}],
                       "subscriptions": [{"customer": "paula", "productId": "monthly",
                                          "status": "SUBSCRIPTION_STATE_EXPIRED"}]}}]}
        """

    let host = SecretsCLITests()

    static func request(_ method: String, _ url: String, key: String, json: Any? = nil) async throws -> (
        status: Int, json: [String: Any]
    ) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return (
            (response as? HTTPURLResponse)?.statusCode ?? 0,
            (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        )
    }

    /// A loopback port free a moment ago: the server must name the Play simulator's before it runs.
    static func freePort() async throws -> Int {
        var router = Router()
        router.add(.get, "/") { _, _ in HTTPResponse(status: .ok) }
        let server = try HTTPServer(
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0), responder: router.buildResponder())
        let port = server.port
        await server.stop()
        return Int(port)
    }

    @Test func aPlayScenarioRunsAgainstARunningServer() async throws {
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("scenario.json")
        try Self.scenario.write(to: file, atomically: true, encoding: .utf8)
        let data = directory.appendingPathComponent("simulator")
        let playPort = try await Self.freePort()
        let playBase = "http://127.0.0.1:\(playPort)"
        // The service account the run's simulator will accept, as an operator gives it to the app.
        let account = try PlaySimulatorData.open(data, tokenURI: URL(string: playBase + "/token")!).serviceAccount
        let serve = [
            "serve", "--database", directory.appendingPathComponent("store.sqlite").path, "--listen", "127.0.0.1:0",
        ]
        let environment = [
            "STOREKEEPER_ADMIN_KEY": Self.adminKey, "STOREKEEPER_SECRETS_KEY": SecretsCLITests.keyA,
            "STOREKEEPER_PLAY_API_BASE_URL": playBase + "/",
            "STOREKEEPER_PLAY_PUSH_KEY_SET": playBase + "/oauth2/v3/certs",
            "STOREKEEPER_ACCESS_SCHEDULER": "false", "STOREKEEPER_WEBHOOK_WORKER": "false",
        ]
        try await host.serveBriefly(serve, environment: environment) { url in
            let admin = Self.adminKey
            let created = try await Self.request(
                "POST", url + "/v1/admin/apps", key: admin,
                json: ["id": "cli-play", "bundleId": Self.package, "environments": ["Sandbox"]])
            #expect(created.status == 201, "\(created.json)")
            let publicKey = try #require(
                try await Self.request(
                    "POST", url + "/v1/admin/apps/cli-play/keys", key: admin, json: ["kind": "public", "label": "app"]
                ).json["key"] as? String)
            let secretKey = try #require(
                try await Self.request(
                    "POST", url + "/v1/admin/apps/cli-play/keys", key: admin,
                    json: ["kind": "secret", "label": "backend"]
                ).json["key"] as? String)
            let catalog = try await Self.request(
                "PUT", url + "/v1/apps/cli-play/catalog", key: secretKey,
                json: [
                    "products": [
                        [
                            "productId": "monthly", "kind": "AUTO_RENEWABLE", "subscriptionGroup": "G1",
                            "groupLevel": 1, "duration": "P1M", "entitlementIds": ["pro"],
                        ]
                    ]
                ])
            #expect(catalog.status == 200, "\(catalog.json)")
            let play = try await Self.request(
                "PUT", url + "/v1/admin/apps/cli-play/googleplay", key: admin,
                json: [
                    "packageName": Self.package, "serviceAccountKey": String(decoding: account.json, as: UTF8.self),
                    "rtdnAudience": "storekeeper",
                    "pushServiceAccountEmail": "play-push@simulator.iam.gserviceaccount.com",
                ])
            #expect(play.status == 200, "\(play.json)")

            let run = try host.run([
                "simulate", "run", file.path, "--data", data.path, "--play-port", String(playPort),
                "--play-target", url + "/v1/apps/cli-play/notifications/googleplay", "--play-package", Self.package,
                "--public-key", publicKey,
            ])
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            let lines = run.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("scenario play journey: simulator at http://127.0.0.1:") == true)
            #expect(
                lines.dropFirst().first
                    == "Google Play simulator at \(playBase) (package \(Self.package); service account "
                    + "\(data.path)/play/service-account.json), pushes to \(url)/v1/apps/cli-play/notifications/googleplay"
            )
            #expect(
                Array(lines.dropFirst(2)) == [
                    "ok   1 play purchase → SUBSCRIPTION_PURCHASED", "ok   2 play postTransaction",
                    "ok   3 play renew → SUBSCRIPTION_RENEWED", "ok   4 play cancel → SUBSCRIPTION_CANCELED",
                    "ok   5 play expire → SUBSCRIPTION_EXPIRED", "5 passed, 0 failed",
                ], "\(run.stdout)")

            // What the server made of the pushes and the post.
            let info = try await Self.request("GET", url + "/v1/apps/cli-play/customers/paula", key: publicKey)
            let pro = (info.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any] ?? [:]
            #expect(pro["store"] as? String == "play_store")
            #expect(pro["productId"] as? String == "monthly")
            #expect(pro["isActive"] as? Bool == false)
            #expect(pro["willRenew"] as? Bool == false)
            #expect((pro["transactionId"] as? String)?.hasSuffix("..0") == true, "\(pro)")
            let events = try await Self.request(
                "GET", url + "/v1/apps/cli-play/customers/paula/events?limit=50", key: secretKey)
            let types = (events.json["events"] as? [[String: Any]] ?? []).compactMap {
                ($0["event"] as? [String: Any])?["type"] as? String
            }
            #expect(types == ["INITIAL_PURCHASE", "RENEWAL", "CANCELLATION", "EXPIRATION"])
        }
    }
}
