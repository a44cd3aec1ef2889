import AppStoreClient
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Where webhooks may go: refused at registration with a clear 400, checked again before every
/// delivery (the resolved address, pinned), and failures listed only by category.
@Suite(.serialized) struct WebhookDestinationTests {
    /// Each URL the policy refuses by default, and the rule that refuses it.
    static let refused: [(url: String, rule: String)] = [
        ("http://127.0.0.1/hooks", "destination.loopback"),
        ("http://127.45.6.7:8080/hooks", "destination.loopback"),
        ("http://127.1/hooks", "destination.loopback"),
        ("http://2130706433/hooks", "destination.loopback"),
        ("http://localhost:3000/hooks", "destination.loopback"),
        ("http://LOCALHOST./hooks", "destination.loopback"),
        ("http://api.localhost/hooks", "destination.loopback"),
        ("http://[::1]:9000/hooks", "destination.loopback"),
        ("http://[::ffff:127.0.0.1]/hooks", "destination.loopback"),
        ("http://[2002:7f00:1::1]/hooks", "destination.loopback"),
        ("http://169.254.169.254/latest/meta-data/", "destination.linkLocal"),
        ("http://[::ffff:a9fe:a9fe]/latest/meta-data/", "destination.linkLocal"),
        ("http://[fe80::1]/hooks", "destination.linkLocal"),
        ("http://10.0.0.5/hooks", "destination.private"),
        ("http://172.16.0.1/hooks", "destination.private"),
        ("http://172.31.255.254/hooks", "destination.private"),
        ("http://192.168.1.10/hooks", "destination.private"),
        ("http://[fc00::1]/hooks", "destination.private"),
        ("http://[fd00:ec2::254]/hooks", "destination.private"),
        ("http://[64:ff9b::a00:1]/hooks", "destination.private"),
        ("http://internal.test/hooks", "destination.private"),
        ("http://0.0.0.0:8080/hooks", "destination.unspecified"),
        ("http://[::]/hooks", "destination.unspecified"),
        ("http://100.64.0.1/hooks", "destination.sharedAddressSpace"),
        ("http://224.0.0.1/hooks", "destination.multicast"),
        ("http://255.255.255.255/hooks", "destination.multicast"),
        ("http://240.0.0.1/hooks", "destination.reserved"),
        ("https://user:pass@hooks.example.com/hooks", "destination.credentials"),
        ("https://user@hooks.example.com/hooks", "destination.credentials"),
    ]

    /// A resolver playing DNS for the tests' names.
    static func resolver() -> FixedResolver {
        let resolver = FixedResolver()
        resolver.set("hooks.example.com", ["93.184.216.34"])
        // Every address is checked: one private answer among public ones refuses the name.
        resolver.set("internal.test", ["93.184.216.34", "10.1.2.3"])
        resolver.set("hooks.internal", ["10.0.0.7"])
        return resolver
    }

    @Test func registrationRefusesSpecialDestinations() async throws {
        let harness = try await ServerHarness(webhookResolver: Self.resolver())
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        for (url, rule) in Self.refused {
            let created = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": url])
            #expect(created.status == 400, "\(url)")
            #expect(created.errorCode == "destination_refused", "\(url)")
            let message = (created.json["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.hasPrefix("url refused (\(rule)): "), "\(url): \(message)")
        }
        let loopback = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": "http://127.0.0.1/hooks"])
        #expect(
            (loopback.json["error"] as? [String: Any])?["message"] as? String
                == "url refused (destination.loopback): the host is a loopback address. Loopback, link-local, "
                + "private and other special-purpose destinations need the server's webhookAllowedDestinations.")
        let credentials = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey,
            json: ["url": "https://user:pass@hooks.example.com/hooks"])
        #expect(
            (credentials.json["error"] as? [String: Any])?["message"] as? String
                == "url refused (destination.credentials): url must not carry credentials; authenticate webhooks "
                + "by their signature.")
        let scheme = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": "ftp://hooks.example.com/"])
        #expect(scheme.status == 400)
        #expect(scheme.errorCode == "invalid_body")

        // Public destinations pass, by name or address, IPv4-mapped included.
        var accepted: [String] = []
        for url in [
            "https://hooks.example.com/storekeeper", "http://93.184.216.34:8080/x?y=1", "http://[2606:4700::1111]/x",
            "http://[::ffff:93.184.216.34]/x",
        ] {
            accepted.append(try await harness.addEndpoint(app, url: url))
        }
        // A change of URL is checked the same way.
        let moved = try await harness.request(
            "PUT", "/v1/apps/\(app.appId)/webhooks/\(accepted[0])", key: app.secretKey,
            json: ["url": "http://169.254.169.254/latest/meta-data/"])
        #expect(moved.status == 400)
        #expect(moved.errorCode == "destination_refused")
        let listed = try await harness.request("GET", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey)
        let urls = (listed.json["endpoints"] as? [[String: Any]] ?? []).compactMap { $0["url"] as? String }
        #expect(
            Set(urls)
                == [
                    "https://hooks.example.com/storekeeper", "http://93.184.216.34:8080/x?y=1",
                    "http://[2606:4700::1111]/x", "http://[::ffff:93.184.216.34]/x",
                ])
    }

    @Test func allowListAdmitsDevelopmentDestinations() async throws {
        let harness = try await ServerHarness(
            webhookAllowedDestinations: ["127.0.0.0/8", "::1", "hooks.internal"], webhookResolver: Self.resolver())
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        for url in [
            "http://127.0.0.1:8080/hooks", "http://localhost:3000/hooks", "http://[::ffff:127.0.0.1]/hooks",
            "http://[::1]/hooks", "http://hooks.internal/hooks",
        ] {
            let created = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": url])
            #expect(created.status == 201, "\(url): \(created.text)")
        }
        for (url, rule) in [
            ("http://10.0.0.7/hooks", "destination.private"),
            ("http://169.254.169.254/", "destination.linkLocal"),
            ("https://user:pass@127.0.0.1/hooks", "destination.credentials"),
        ] {
            let created = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": url])
            #expect(created.status == 400, "\(url)")
            let message = (created.json["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.hasPrefix("url refused (\(rule)): "), "\(url): \(message)")
        }
    }

    @Test func addressRules() throws {
        let policy = WebhookDestinationPolicy()
        let table: [(String, String?)] = [
            ("127.0.0.1", "destination.loopback"), ("127.255.255.255", "destination.loopback"),
            ("::1", "destination.loopback"), ("::ffff:127.0.0.1", "destination.loopback"),
            ("::127.0.0.1", "destination.loopback"), ("64:ff9b::7f00:1", "destination.loopback"),
            ("0.0.0.0", "destination.unspecified"), ("::", "destination.unspecified"),
            ("169.254.169.254", "destination.linkLocal"), ("fe80::1", "destination.linkLocal"),
            ("febf::1", "destination.linkLocal"), ("10.255.255.255", "destination.private"),
            ("172.16.0.0", "destination.private"), ("172.31.255.255", "destination.private"),
            ("192.168.0.1", "destination.private"), ("fc00::", "destination.private"),
            ("fdff::1", "destination.private"), ("fec0::1", "destination.private"),
            ("100.127.255.255", "destination.sharedAddressSpace"), ("239.1.1.1", "destination.multicast"),
            ("ff02::1", "destination.multicast"), ("255.255.255.255", "destination.multicast"),
            ("192.0.0.170", "destination.reserved"), ("198.18.0.1", "destination.reserved"),
            ("2001:0:4136:e378::1", "destination.reserved"), ("::2", "destination.reserved"),
            // Just outside the refused ranges.
            ("172.15.255.255", nil), ("172.32.0.0", nil), ("11.0.0.1", nil), ("128.0.0.1", nil),
            ("169.253.255.255", nil), ("100.128.0.0", nil), ("93.184.216.34", nil), ("::ffff:93.184.216.34", nil),
            ("64:ff9b::5db8:d822", nil), ("2002:5db8:d822::1", nil), ("2606:4700::1111", nil), ("fbff::1", nil),
            ("fe00::1", nil),
        ]
        for (text, rule) in table {
            let address = try #require(IPAddress(text), "\(text)")
            #expect(policy.refusal(of: address)?.rule == rule, "\(text)")
        }
        // Ranges: a prefix with host bits set is refused, not widened; a bare address is exact.
        #expect(IPAddressRange("10.0.0.1/8") == nil)
        #expect(IPAddressRange("10.0.0.0/33") == nil)
        #expect(IPAddressRange("10.0.0.0/x") == nil)
        #expect(IPAddressRange("::1")?.description == "::1/128")
        #expect(IPAddressRange("127.0.0.1")?.description == "127.0.0.1/32")
        #expect(IPAddress("127.1") == nil)
        #expect(IPAddress("::ffff:7f00:1")?.embeddedIPv4?.description == "127.0.0.1")
        let allowed = WebhookDestinationPolicy(allowList: try WebhookDestinationAllowList(["127.0.0.1"]))
        #expect(allowed.refusal(of: IPAddress("127.0.0.1")!) == nil)
        #expect(allowed.refusal(of: IPAddress("::ffff:127.0.0.1")!) == nil)
        #expect(allowed.refusal(of: IPAddress("127.0.0.2")!)?.rule == "destination.loopback")
    }

    @Test func allowListConfiguration() throws {
        let fromEnvironment = try ServerConfiguration.load(
            environment: ["STOREKEEPER_WEBHOOK_ALLOWED_DESTINATIONS": "127.0.0.0/8, ::1 ,Hooks.Internal."])
        #expect(fromEnvironment.webhookAllowedDestinations.entries == ["127.0.0.0/8", "::1/128", "hooks.internal"])
        #expect(ServerConfiguration().webhookAllowedDestinations.entries == [])

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webhooks-\(uniqueDigits()).json")
        try Data(#"{"webhookAllowedDestinations": ["10.0.0.0/8", "localhost"]}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try ServerConfiguration.load(file: file.path, environment: [:])
        #expect(fromFile.webhookAllowedDestinations.entries == ["10.0.0.0/8", "localhost"])

        for (value, entry) in [("127.0.0.0/8,10.0.0.1/8", 2), ("http://x", 1), ("::1/129", 1), ("a b", 1)] {
            do {
                _ = try ServerConfiguration.load(environment: ["STOREKEEPER_WEBHOOK_ALLOWED_DESTINATIONS": value])
                Issue.record("\(value) was accepted")
            } catch {
                #expect(error.code == "config.invalidValue")
                #expect(
                    error.message
                        == "webhookAllowedDestinations from STOREKEEPER_WEBHOOK_ALLOWED_DESTINATIONS: entry \(entry): "
                        + "not a CIDR range (with no bits set beyond the prefix), an IP address or a host name "
                        + "(comma-separated CIDR ranges, addresses or host names)")
            }
        }
    }

    @Test func listedCategories() {
        #expect(WebhookDeliveryFailure.listedCategory("http_status_503") == "http_status_503")
        #expect(WebhookDeliveryFailure.listedCategory("HTTP 503") == "http_status_503")
        #expect(WebhookDeliveryFailure.listedCategory("transport: URLError -1004 10.0.0.1:22") == "delivery_failed")
        #expect(WebhookDeliveryFailure.listedCategory("") == "delivery_failed")
        #expect(WebhookDeliveryFailure.httpStatus(500).category == "http_status_500")
        #expect(WebhookDeliveryFailure.destinationRefused.category == "destination_refused")
    }

    /// An endpoint registered before the policy (or whose name now resolves elsewhere) is
    /// checked at delivery: not contacted, failed as `destination_refused`.
    @Test func deliveryChecksTheResolvedAddress() async throws {
        let resolver = Self.resolver()
        let harness = try await ServerHarness(webhookResolver: resolver)
        let receiver = try WebhookReceiver()
        defer {
            Task {
                await receiver.stop()
                await harness.stop()
            }
        }
        let app = try await harness.createApp()
        let port = receiver.server.baseURL.port!
        // Registered while the name pointed at a public address; now it resolves to loopback.
        resolver.set("rebind.test", ["93.184.216.34"])
        let rebound = try await harness.addEndpoint(app, url: "http://rebind.test:\(port)/hooks")
        resolver.set("rebind.test", ["127.0.0.1"])
        // Stored as it was before the policy existed.
        let legacy = "we_legacy\(uniqueDigits())"
        let appId = app.appId
        _ = try await harness.store.write { transaction in
            try transaction.saveWebhookEndpoint(
                WebhookEndpoint(
                    id: legacy, appId: appId, url: "http://localhost:\(port)/hooks", secret: "whsec_0123456789abcdef"),
                at: TestSigning.signedDate)
        }
        try await harness.purchase(app, appUserId: "mallory")

        let transport = RecordingTransport()
        let deliverer = WebhookDeliverer(
            store: harness.store, transport: transport, clock: ServerClock(now: harness.clock.function),
            metrics: ServerMetrics(), settings: WebhookDeliverer.Settings(requestTimeout: .seconds(5), random: { 0.5 }),
            destinations: WebhookDestinationGuard(policy: WebhookDestinationPolicy(), resolver: resolver),
            secrets: harness.secrets)
        #expect(await deliverer.deliverDue() == 2)
        #expect(transport.urls == [])
        #expect(receiver.deliveries.count == 0)
        #expect(try await harness.failedErrors(app) == [rebound: "destination_refused", legacy: "destination_refused"])
    }

    /// An http delivery goes to the address that was checked, with the registered name as Host
    /// (`hooks.test` exists only in the test's resolver: `.test` is reserved, RFC 6761).
    @Test func httpDeliveryConnectsToTheCheckedAddress() async throws {
        let resolver = Self.resolver()
        resolver.set("hooks.test", ["127.0.0.1"])
        let harness = try await ServerHarness(webhookAllowedDestinations: ["127.0.0.1"], webhookResolver: resolver)
        let receiver = try WebhookReceiver()
        defer {
            Task {
                await receiver.stop()
                await harness.stop()
            }
        }
        let app = try await harness.createApp()
        let port = receiver.server.baseURL.port!
        _ = try await harness.addEndpoint(app, url: "http://hooks.test:\(port)/hooks?source=storekeeper")
        try await harness.purchase(app, appUserId: "pinned")
        let transport = RecordingTransport()
        let deliverer = WebhookDeliverer(
            store: harness.store, transport: transport, clock: ServerClock(now: harness.clock.function),
            metrics: ServerMetrics(), settings: WebhookDeliverer.Settings(requestTimeout: .seconds(5), random: { 0.5 }),
            destinations: WebhookDestinationGuard(
                policy: WebhookDestinationPolicy(allowList: try WebhookDestinationAllowList(["127.0.0.1"])),
                resolver: resolver), secrets: harness.secrets)
        #expect(await deliverer.deliverDue() == 1)
        #expect(transport.urls == ["http://hooks.test:\(port)/hooks?source=storekeeper"])
        #expect(transport.connectAddresses == ["127.0.0.1"])
        #expect(receiver.deliveries.count == 1)
        #expect(receiver.deliveries.first?.headers["Host"] == "hooks.test:\(port)")
        #expect(try await harness.failedErrors(app) == [:])
    }

    /// The failed-deliveries listing shows what kind of failure, never addresses or ports.
    @Test func failedDeliveriesShowOnlyACategory() async throws {
        let resolver = Self.resolver()
        resolver.set("nowhere.test", [])
        let harness = try await ServerHarness(webhookAllowedDestinations: ["127.0.0.1"], webhookResolver: resolver)
        let receiver = try WebhookReceiver()
        receiver.answer(500)
        let hanging = try HangingListener()
        defer {
            Task {
                hanging.close()
                await receiver.stop()
                await harness.stop()
            }
        }
        let app = try await harness.createApp()
        let port = receiver.server.baseURL.port!
        let status = try await harness.addEndpoint(app, url: receiver.url)
        let refused = try await harness.addEndpoint(app, url: "http://127.0.0.1:\(try HangingListener.closedPort())/")
        let tls = try await harness.addEndpoint(app, url: "https://127.0.0.1:\(port)/hooks")
        let timeout = try await harness.addEndpoint(app, url: hanging.url)
        let dns = try await harness.addEndpoint(app, url: "http://nowhere.test/hooks")
        let privateId = "we_private\(uniqueDigits())"
        let appId = app.appId
        _ = try await harness.store.write { transaction in
            try transaction.saveWebhookEndpoint(
                WebhookEndpoint(
                    id: privateId, appId: appId, url: "http://10.0.0.1:22/", secret: "whsec_0123456789abcdef"),
                at: TestSigning.signedDate)
        }
        try await harness.purchase(app, appUserId: "failing")
        let deliverer = WebhookDeliverer(
            store: harness.store, transport: PinnedHTTPTransport(), clock: ServerClock(now: harness.clock.function),
            metrics: ServerMetrics(), settings: WebhookDeliverer.Settings(requestTimeout: .seconds(1), random: { 0.5 }),
            destinations: WebhookDestinationGuard(
                policy: WebhookDestinationPolicy(allowList: try WebhookDestinationAllowList(["127.0.0.1"])),
                resolver: resolver), secrets: harness.secrets)
        #expect(await deliverer.deliverDue() == 6)
        let errors = try await harness.failedErrors(app)
        #expect(
            errors == [
                status: "http_status_500", refused: "connection_failed", tls: "tls_failed", timeout: "timeout",
                dns: "dns_failed", privateId: "destination_refused",
            ], "\(errors)")
    }
}
