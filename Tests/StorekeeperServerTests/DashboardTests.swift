import AppStoreModels
import Foundation
import HTTPServer
import SecretSealing
import Storage
import StorekeeperTesting
import Testing

@testable import StorekeeperServer

/// A browser without a browser: keeps the cookies the dashboard sets and sends requests to
/// the application's responder in process (no redirects followed, so each answer is seen).
struct DashboardClient {
    let responder: Responder
    var cookies: [String: String] = [:]
    /// The CSRF token of the last page that had a form.
    var csrf: String?

    init(_ responder: Responder) { self.responder = responder }

    @discardableResult
    mutating func send(
        _ method: HTTPMethod, _ target: String, form: [String: String]? = nil, headers: [String: String] = [:]
    ) async -> HTTPResponse {
        var fields = HTTPHeaders()
        if !cookies.isEmpty {
            fields["Cookie"] = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
                separator: "; ")
        }
        var body = Data()
        if let form {
            fields["Content-Type"] = "application/x-www-form-urlencoded"
            body = Data(
                form.sorted { $0.key < $1.key }.map { "\($0.key)=\(DashboardHTTP.encode($0.value))" }.joined(
                    separator: "&"
                ).utf8)
        }
        for (name, value) in headers { fields[name] = value }
        let response = await responder.respond(
            to: HTTPRequest(method: method, target: target, headers: fields, body: body))
        for header in response.headers.values(for: "Set-Cookie") {
            let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1).map(String.init)
            if header.contains("Max-Age=0") { cookies[pair[0]] = nil } else { cookies[pair[0]] = pair[1] }
        }
        let text = String(decoding: response.body, as: UTF8.self)
        if let range = text.range(of: #"name="csrf" value=""#) {
            csrf = String(text[range.upperBound...].prefix { $0 != "\"" })
        }
        return response
    }

    /// Signs in with `key` through the form, as a person would.
    mutating func signIn(_ key: String) async -> HTTPResponse {
        await send(.get, "/dashboard/sign-in")
        return await send(.post, "/dashboard/sign-in", form: ["key": key, "csrf": csrf ?? ""])
    }
}

extension HTTPResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
}

@Suite(.serialized) struct DashboardTests {
    static var databases: [TestDatabase] {
        [.sqlite] + (TestDatabase.postgresURL.map { [.postgres($0)] } ?? [])
    }

    /// Posts a signed transaction for `user` (the public key's route), purchased at the harness's
    /// signing date and good for 30 days.
    static func purchase(
        _ harness: ServerHarness, app: ServerHarness.AppKeys, user: String, id: String = uniqueDigits(),
        productId: String? = nil, token: UUID? = nil
    ) async throws -> TestResponse {
        let t0 = TestSigning.signedDate
        var payload = TestSigning.transaction(
            bundleId: app.bundleId, environment: .sandbox, signedDate: t0, transactionId: id)
        payload.originalTransactionId = id
        payload.purchaseDate = t0
        payload.originalPurchaseDate = t0
        payload.expiresDate = t0.plus(days: 30)
        payload.webOrderLineItemId = "w\(id)"
        payload.subscriptionGroupIdentifier = "group"
        payload.appAccountToken = token
        if let productId { payload.productId = productId }
        let jws = try harness.ca.signer.sign(payload)
        return try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/\(DashboardHTTP.encode(user))/transactions", key: app.publicKey,
            json: ["signedTransaction": jws])
    }

    @Test("sign-in: a POSTed form with its CSRF token; an HttpOnly SameSite=Strict cookie; sign-out ends it")
    func signInAndOut() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let other = try await harness.createApp()
        var client = DashboardClient(harness.application.responder)

        var response = await client.send(.get, "/dashboard")
        #expect(response.status.code == 303)
        #expect(response.headers["Location"] == "/dashboard/sign-in")

        response = await client.send(.get, "/dashboard/sign-in")
        #expect(response.status.code == 200)
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(response.headers["Content-Security-Policy"]?.hasPrefix("default-src 'none'; style-src 'self';") == true)
        #expect(response.headers["Referrer-Policy"] == "same-origin")
        #expect(response.text.contains(#"<form method="post" action="/dashboard/sign-in">"#))
        #expect(response.text.contains(##"<a class="skip" href="#main">Skip to content</a>"##))
        let signInToken = try #require(client.csrf)

        // Without the token (or its cookie), with a public key, with nonsense: no session.
        response = await client.send(.post, "/dashboard/sign-in", form: ["key": app.secretKey])
        #expect(response.status.code == 403)
        var stranger = DashboardClient(harness.application.responder)
        response = await stranger.send(
            .post, "/dashboard/sign-in", form: ["key": app.secretKey, "csrf": signInToken])
        #expect(response.status.code == 403)
        #expect(stranger.cookies[DashboardController.sessionCookie] == nil)
        response = await client.signIn(app.publicKey)
        #expect(response.status.code == 401)
        #expect(response.text.contains("That key cannot sign in"))
        response = await client.signIn("sk_sec_nonsense")
        #expect(response.status.code == 401)
        #expect(client.cookies[DashboardController.sessionCookie] == nil)

        // What a browser sends: its own origin, or (Chrome under some referrer policies) `null`;
        // another site's origin is refused even with the token.
        await client.send(.get, "/dashboard/sign-in")
        #expect(client.csrf != nil)
        response = await client.send(
            .post, "/dashboard/sign-in", form: ["key": app.secretKey, "csrf": client.csrf ?? ""],
            headers: ["Origin": "http://evil.example", "Host": "127.0.0.1:8080"])
        #expect(response.status.code == 403)
        #expect(client.cookies[DashboardController.sessionCookie] == nil)
        for origin in ["http://127.0.0.1:8080", "null"] {
            await client.send(.get, "/dashboard/sign-in")
            #expect(client.csrf != nil)
            response = await client.send(
                .post, "/dashboard/sign-in", form: ["key": app.secretKey, "csrf": client.csrf ?? ""],
                headers: ["Origin": origin, "Host": "127.0.0.1:8080"])
            #expect(response.status.code == 303, "Origin: \(origin)")
            #expect(response.headers["Location"] == "/dashboard")
        }
        let cookie = try #require(
            response.headers.values(for: "Set-Cookie").first { $0.hasPrefix("storekeeper_dashboard=v1.") })
        #expect(cookie.hasSuffix("; Path=/dashboard; Max-Age=28800; HttpOnly; SameSite=Strict"))
        #expect(!cookie.contains(app.secretKey))

        response = await client.send(.get, "/dashboard")
        #expect(response.headers["Location"] == "/dashboard/apps/\(app.appId)")
        response = await client.send(.get, "/dashboard/apps/\(app.appId)")
        #expect(response.status.code == 200)
        #expect(response.text.contains("<h1>Overview</h1>"))
        // An app's session sees its app only.
        response = await client.send(.get, "/dashboard/apps/\(other.appId)/customers")
        #expect(response.status.code == 403)
        #expect(!response.text.contains("<h1>Customers</h1>"))

        // A changed cookie is no session.
        var forger = DashboardClient(harness.application.responder)
        let token = try #require(client.cookies[DashboardController.sessionCookie])
        // A changed signature character, and (what once passed 1 time in 16) the signature's
        // last character changed only in its unused bits: the same MAC bytes, another text.
        let middle = token.index(token.endIndex, offsetBy: -20)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = try #require(token.last)
        let lastSextet = try #require(alphabet.firstIndex(of: last))
        for changed in [
            token.replacingCharacters(in: middle...middle, with: token[middle] == "A" ? "B" : "A"),
            String(token.dropLast()) + String(alphabet[lastSextet | 1]),
        ] {
            forger.cookies[DashboardController.sessionCookie] = changed
            response = await forger.send(.get, "/dashboard/apps/\(app.appId)")
            #expect(response.headers["Location"] == "/dashboard/sign-in", "\(changed)")
        }

        // Sign-out needs the token too; then the cookie is gone and so is the session.
        response = await client.send(.post, "/dashboard/sign-out", form: ["csrf": "wrong"])
        #expect(response.status.code == 403)
        response = await client.send(.post, "/dashboard/sign-out", form: ["csrf": client.csrf ?? ""])
        #expect(response.status.code == 303)
        #expect(client.cookies[DashboardController.sessionCookie] == nil)
        response = await client.send(.get, "/dashboard/apps/\(app.appId)")
        #expect(response.headers["Location"] == "/dashboard/sign-in")
    }

    @Test("admin sign-in: every app; Secure cookies when configured; a revoked key's session ends")
    func adminAndRevocation() async throws {
        let harness = try await ServerHarness(configure: { $0.dashboardSecureCookies = true })
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        var admin = DashboardClient(harness.application.responder)
        var response = await admin.signIn(ServerHarness.adminKey)
        #expect(response.status.code == 303)
        #expect(
            response.headers.values(for: "Set-Cookie").contains {
                $0.hasPrefix("storekeeper_dashboard=v1.") && $0.hasSuffix("; HttpOnly; SameSite=Strict; Secure")
            })
        response = await admin.send(.get, "/dashboard/apps")
        #expect(response.status.code == 200)
        #expect(response.text.contains(#"<a href="/dashboard/apps/\#(app.appId)">\#(app.appId)</a>"#))

        let created = try await harness.request(
            "POST", "/v1/admin/apps/\(app.appId)/keys", key: ServerHarness.adminKey,
            json: ["kind": "secret", "label": "dashboard"])
        let keyId = try #require(created.json["id"] as? String)
        var user = DashboardClient(harness.application.responder)
        #expect(await user.signIn(try #require(created.json["key"] as? String)).status.code == 303)
        #expect(await user.send(.get, "/dashboard/apps/\(app.appId)/operations").status.code == 200)
        let revoked = try await harness.request("DELETE", "/v1/admin/keys/\(keyId)", key: ServerHarness.adminKey)
        #expect(revoked.status == 200 || revoked.status == 204)
        response = await user.send(.get, "/dashboard/apps/\(app.appId)/operations")
        #expect(response.headers["Location"] == "/dashboard/sign-in")
    }

    @Test("a session begun on one instance is honoured by another configured alike, not by one with other secrets")
    func sessionAcrossInstances() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        var client = DashboardClient(harness.application.responder)
        #expect(await client.signIn(app.secretKey).status.code == 303)

        let twin = StorekeeperApplication(
            configuration: harness.application.configuration, store: harness.store, clock: harness.application.clock,
            secrets: harness.secrets)
        var elsewhere = DashboardClient(twin.responder)
        elsewhere.cookies = client.cookies
        #expect(await elsewhere.send(.get, "/dashboard/apps/\(app.appId)").status.code == 200)

        var configuration = harness.application.configuration
        configuration.adminKey = "another-admin-key-0123456789"
        let stranger = StorekeeperApplication(
            configuration: configuration, store: harness.store, clock: harness.application.clock,
            secrets: harness.secrets)
        var refused = DashboardClient(stranger.responder)
        refused.cookies = client.cookies
        #expect(await refused.send(.get, "/dashboard/apps/\(app.appId)").headers["Location"] == "/dashboard/sign-in")
    }

    /// With a secrets key configured, sessions are signed with it, so rotating a leaked admin
    /// key did not end the sessions that key opened (review finding): a configured-admin session
    /// now names the key's fingerprint and holds only while that key is configured.
    @Test("replacing the configured admin key ends its dashboard sessions; app sessions stand")
    func adminKeyRotation() async throws {
        let secretsKey = try SecretsKey.generate().base64
        let harness = try await ServerHarness(configure: { $0.secretsKey = secretsKey })
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        var admin = DashboardClient(harness.application.responder)
        #expect(await admin.signIn(ServerHarness.adminKey).status.code == 303)
        var user = DashboardClient(harness.application.responder)
        #expect(await user.signIn(app.secretKey).status.code == 303)

        func instance(adminKey: String) -> StorekeeperApplication {
            var configuration = harness.application.configuration
            configuration.adminKey = adminKey
            return StorekeeperApplication(
                configuration: configuration, store: harness.store, clock: harness.application.clock,
                secrets: harness.secrets)
        }
        // Configured alike: both sessions hold.
        var twin = DashboardClient(instance(adminKey: ServerHarness.adminKey).responder)
        twin.cookies = admin.cookies
        #expect(await twin.send(.get, "/dashboard/apps").status.code == 200)
        // The admin key replaced: its session ends, the app's goes on.
        let rotated = instance(adminKey: "a-new-admin-key-after-the-leak-0123456789")
        var stale = DashboardClient(rotated.responder)
        stale.cookies = admin.cookies
        #expect(await stale.send(.get, "/dashboard/apps").headers["Location"] == "/dashboard/sign-in")
        var app2 = DashboardClient(rotated.responder)
        app2.cookies = user.cookies
        #expect(await app2.send(.get, "/dashboard/apps/\(app.appId)").status.code == 200)
    }

    @Test("hostile app user ids and product ids are shown escaped, never as markup")
    func hostileIdentifiers() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let user = #"<b onmouseover=alert("u")>'&"#
        let product = #"<img src=x onerror=alert(1)>"#
        let posted = try await Self.purchase(harness, app: app, user: user, productId: product)
        #expect(posted.status == 200)
        var client = DashboardClient(harness.application.responder)
        #expect(await client.signIn(app.secretKey).status.code == 303)

        let page = await client.send(
            .get, DashboardHTTP.link("/dashboard/apps/\(app.appId)/customers", [("q", user), ("by", "appUserId")]))
        #expect(page.status.code == 200)
        let text = page.text
        #expect(!text.contains("<b "))
        #expect(!text.contains("<img"))
        #expect(text.contains("Customer &lt;b onmouseover=alert(&quot;u&quot;)&gt;&#39;&amp;</h2>"))
        #expect(text.contains("<td>&lt;img src=x onerror=alert(1)&gt; / "))
        // The search box echoes the query inside an attribute, escaped.
        #expect(text.contains(#"value="&lt;b onmouseover=alert(&quot;u&quot;)&gt;&#39;&amp;""#))

        let missing = await client.send(
            .get, DashboardHTTP.link("/dashboard/apps/\(app.appId)/customers", [("q", "\"><i>x")]))
        #expect(missing.status.code == 404)
        #expect(missing.text.contains("No customer is known by &quot;&gt;&lt;i&gt;x."))
    }

    @Test("the customer page: found by each identifier, entitlements with the engine's why, timeline, raw JWS")
    func customerPage() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let id = uniqueDigits()
        let token = UUID()
        #expect(try await Self.purchase(harness, app: app, user: "carol", id: id, token: token).status == 200)
        let api = try await harness.request("GET", "/v1/apps/\(app.appId)/customers/carol", key: app.publicKey)
        let pro = try #require((api.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any])
        let reason = try #require(pro["reason"] as? String)
        var client = DashboardClient(harness.application.responder)
        #expect(await client.signIn(app.secretKey).status.code == 303)

        for (query, by) in [
            ("carol", "appUserId"), (id, "originalTransactionId"), (token.uuidString, "appAccountToken"), (id, "any"),
        ] {
            let page = await client.send(
                .get, DashboardHTTP.link("/dashboard/apps/\(app.appId)/customers", [("q", query), ("by", by)]))
            #expect(page.status.code == 200, "by \(by)")
            #expect(page.text.contains(#"<h2 id="customer">Customer carol</h2>"#), "by \(by)")
        }
        let page = await client.send(.get, "/dashboard/apps/\(app.appId)/customers?q=carol").text
        #expect(page.contains(#"<dd id="active-entitlements">pro</dd>"#))
        #expect(page.contains(#"<tr><th scope="row">pro</th><td class="active">active</td>"#))
        #expect(page.contains("<td>\(HTML.escape(reason))</td>"))
        let facts = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/customers/carol/transactions", key: app.secretKey)
        let jws = try #require((facts.json["items"] as? [[String: Any]])?.first?["raw"] as? String)
        #expect(page.contains("<pre>\(jws)</pre>"))
        #expect(page.contains("<td>INITIAL_PURCHASE</td>"))
        #expect(page.contains("<td>com.example.monthly / \(id)</td>"))
        #expect(page.contains(#"<form method="post" action="/dashboard/apps/\#(app.appId)/customers/sync">"#))

        // An action without the session's token does nothing; with it, it runs (here the app
        // has no App Store connection, which the notice names).
        var response = await client.send(
            .post, "/dashboard/apps/\(app.appId)/customers/sync", form: ["appUserId": "carol"])
        #expect(response.status.code == 403)
        response = await client.send(
            .post, "/dashboard/apps/\(app.appId)/customers/sync",
            form: ["appUserId": "carol", "csrf": client.csrf ?? ""], headers: ["Origin": "https://evil.example"])
        #expect(response.status.code == 403)
        response = await client.send(
            .post, "/dashboard/apps/\(app.appId)/customers/sync",
            form: ["appUserId": "carol", "csrf": client.csrf ?? ""])
        #expect(response.status.code == 303)
        let location = try #require(response.headers["Location"])
        #expect(location.hasPrefix("/dashboard/apps/\(app.appId)/customers?q=carol&by=appUserId&notice=sync_"))
    }

    @Test(
        "the operations page counts intake by type and outcome, failures by rule, and replays by form",
        arguments: databases)
    func operationsPage(database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database)
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let id = uniqueDigits()
        let jws = try signer.transaction(id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0)
        let path = "/v1/apps/\(app.appId)/notifications/appstore"
        for _ in 0..<2 {
            let payload = try signer.notification(.subscribed, .initialBuy, transaction: jws, signed: t0)
            #expect(try await harness.request("POST", path, json: ["signedPayload": payload]).status == 200)
        }
        let refused = try await harness.request("POST", path, json: ["signedPayload": "a.b.c"])
        #expect(refused.status >= 400)

        var client = DashboardClient(harness.application.responder)
        #expect(await client.signIn(app.secretKey).status.code == 303)
        let page = await client.send(.get, "/dashboard/apps/\(app.appId)/operations")
        #expect(page.status.code == 200)
        let text = page.text
        #expect(
            text.contains(#"<tr><td>SUBSCRIBED</td><td>INITIAL_BUY</td><td>unclaimed</td><td class="number">2</td>"#))
        // The whole log, paged: on PostgreSQL it holds every earlier test's entries too.
        var audit: [AuditEntry] = []
        while true {
            let after = audit.last?.id
            let page = try await harness.store.read { try $0.auditEntries(after: after, limit: 1000) }
            audit += page
            if page.count < 1000 { break }
        }
        let rule = try #require(
            audit.first { $0.action == "notification.rejected" && $0.appId == app.appId }.flatMap {
                if case .object(let detail) = $0.detail, case .string(let rule)? = detail["rule"] { rule } else { nil }
            })
        #expect(text.contains(#"<tr><td>\#(rule)</td><td class="number">1</td>"#))
        #expect(text.contains(#"<span class="value" id="deliveries-dead">0</span>"#))

        // Replay: refused without the token; an unknown delivery is named as such.
        var response = await client.send(.post, "/dashboard/apps/\(app.appId)/deliveries/999999/replay", form: [:])
        #expect(response.status.code == 403)
        response = await client.send(
            .post, "/dashboard/apps/\(app.appId)/deliveries/999999/replay", form: ["csrf": client.csrf ?? ""])
        #expect(response.headers["Location"] == "/dashboard/apps/\(app.appId)/operations?notice=replay_not_found")
    }

    @Test(
        "the overview: new customers against the previous period, charts, period check, CSV of the same figures",
        arguments: databases)
    func overview(database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database)
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        for user in ["ann", "bob"] { #expect(try await Self.purchase(harness, app: app, user: user).status == 200) }
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let id = uniqueDigits()
        let jws = try signer.transaction(id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0)
        let notification = try signer.notification(.subscribed, .initialBuy, transaction: jws, signed: t0)
        let posted = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/notifications/appstore", json: ["signedPayload": notification])
        #expect(posted.status == 200)
        var client = DashboardClient(harness.application.responder)
        #expect(await client.signIn(app.secretKey).status.code == 303)
        let page = await client.send(.get, "/dashboard/apps/\(app.appId)?period=7")
        #expect(page.status.code == 200)
        #expect(page.text.contains(#"<span class="value">2</span> <span class="change">+2 vs 0</span>"#))
        #expect(page.text.contains(#"<li class="card" id="card-new-customers">"#))
        // The cards of the analytics overview, in its order (docs/analytics.md).
        let cardIds = page.text.components(separatedBy: #"<li class="card" id="card-"#).dropFirst().map {
            String($0.prefix { $0 != "\"" })
        }
        #expect(
            cardIds == [
                "active-subscriptions", "active-trials", "mrr", "revenue", "proceeds", "new-customers", "refunds",
            ])
        #expect(page.text.contains(#"<figure class="chart" id="chart-new-customers">"#))
        #expect(page.text.contains(#"<option value="7" selected>Last 7 days</option>"#))
        #expect(
            page.text.contains(
                #"<a id="csv" href="/dashboard/apps/\#(app.appId)/overview.csv?period=7&amp;environment=Sandbox" download>"#
            ))

        let csv = await client.send(.get, "/dashboard/apps/\(app.appId)/overview.csv?period=7&environment=Sandbox")
        #expect(csv.status.code == 200)
        #expect(csv.headers["Content-Type"] == "text/csv; charset=utf-8")
        let lines = csv.text.components(separatedBy: "\r\n")
        #expect(lines.first == "kind,name,series,label,value")
        #expect(lines.contains("card,new-customers,current,,2"))
        #expect(lines.contains("card,new-customers,previous,,0"))
        let today = DashboardOverviewQuery.label(day: TestSigning.signedDate.millisecondsSince1970 / 86_400_000)
        #expect(lines.contains("chart,chart-new-customers,New customers,\(today),2"))
        #expect(lines.filter { $0.hasPrefix("chart,chart-new-customers,") }.count == 7)
        #expect(lines.contains("chart,chart-notifications,Notifications,\(today),1"))

        #expect(await client.send(.get, "/dashboard/apps/\(app.appId)?period=5").status.code == 400)
        #expect(DashboardController.csvCell("=cmd()") == "'=cmd()")
        #expect(DashboardController.csvCell("a,\"b\"") == "\"a,\"\"b\"\"\"")
        #expect(DashboardController.csvCell("-3") == "-3")
    }

    @Test(
        "the overview's cards and charts are the analytics API's figures for the same query, filters applied",
        arguments: databases)
    func overviewEqualsAnalytics(database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database)
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        // Analytics counts catalog products only: a second monthly product to filter by.
        let catalog = try await harness.request(
            "PUT", "/v1/apps/\(app.appId)/catalog", key: app.secretKey,
            json: [
                "products": ["com.example.monthly", "com.example.pro"].enumerated().map { index, productId in
                    [
                        "productId": productId, "kind": "AUTO_RENEWABLE", "subscriptionGroup": "group",
                        "groupLevel": index + 1, "duration": "P1M", "entitlementIds": ["pro"],
                    ] as [String: Any]
                }
            ])
        #expect(catalog.status == 200, "\(catalog.text)")
        for user in ["ann", "bob"] { #expect(try await Self.purchase(harness, app: app, user: user).status == 200) }
        #expect(
            try await Self.purchase(harness, app: app, user: "cat", productId: "com.example.pro").status == 200)
        var client = DashboardClient(harness.application.responder)
        #expect(await client.signIn(app.secretKey).status.code == 303)
        let today = DashboardOverviewQuery.label(day: TestSigning.signedDate.millisecondsSince1970 / 86_400_000)
        let weekAgo = DashboardOverviewQuery.label(
            day: TestSigning.signedDate.millisecondsSince1970 / 86_400_000 - 6)

        /// The cards of the page's CSV and of the API's overview, as the page shows them.
        func compare(_ filter: String, reporting: String?) async throws -> [String: String] {
            let csv = await client.send(
                .get, "/dashboard/apps/\(app.appId)/overview.csv?period=7&environment=Sandbox\(filter)")
            #expect(csv.status.code == 200)
            let lines = csv.text.components(separatedBy: "\r\n")
            var shown: [String: String] = [:]
            for line in lines where line.hasPrefix("card,") {
                let cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                if cells[2] == "current" { shown[cells[1]] = cells[4] }
            }
            let api = try await harness.request(
                "GET",
                "/v1/apps/\(app.appId)/analytics/overview?environment=Sandbox&from=\(weekAgo)&to=\(today)\(filter)",
                key: app.secretKey)
            #expect(api.status == 200)
            let cards = api.json["cards"] as? [[String: Any]] ?? []
            #expect(cards.count == 7)
            for card in cards {
                let metric = card["metric"] as? String ?? ""
                let money = ["mrr", "revenue", "proceeds"].contains(metric)
                if let value = card["value"] as? Int {
                    let expected = money ? AnalyticsOverviewSource.amount(Int64(value)) : String(value)
                    #expect(shown[metric] == expected, "\(metric)")
                } else {
                    // No reporting currency: the page lists the API's amounts per currency.
                    #expect(reporting == nil && money, "\(metric)")
                    let field = metric == "proceeds" ? "proceeds" : "gross"
                    let amounts = (card["byCurrency"] as? [[String: Any]] ?? []).map {
                        AnalyticsOverviewSource.amount(Int64($0[field] as? Int ?? -1)) + " "
                            + ($0["currency"] as? String ?? "")
                    }
                    let listed = amounts.isEmpty ? "0.00" : amounts.joined(separator: ", ")
                    #expect(shown[metric] == DashboardController.csvCell(listed), "\(metric)")
                }
            }
            // The active-subscriptions chart is the API's series, day by day.
            let series = try await harness.request(
                "GET",
                "/v1/apps/\(app.appId)/analytics/active-subscriptions?environment=Sandbox&from=\(weekAgo)&to=\(today)"
                    + filter, key: app.secretKey)
            let points = series.json["points"] as? [[String: Any]] ?? []
            #expect(points.count == 7)
            let apiRows = points.map {
                "chart,chart-active,Active subscriptions,\($0["period"] as? String ?? ""),\($0["count"] as? Int ?? -1)"
            }
            #expect(lines.filter { $0.hasPrefix("chart,chart-active,Active subscriptions,") } == apiRows)
            // The churn and MRR movement charts are the API's series too.
            func apiPoints(_ metric: String) async throws -> [[String: Any]] {
                let series = try await harness.request(
                    "GET",
                    "/v1/apps/\(app.appId)/analytics/\(metric)?environment=Sandbox&from=\(weekAgo)&to=\(today)"
                        + filter, key: app.secretKey)
                #expect(series.status == 200)
                return series.json["points"] as? [[String: Any]] ?? []
            }
            let churn = try await apiPoints("churn")
            #expect(churn.count == 7)
            for (field, label) in [
                ("voluntary", "Voluntary"), ("involuntary", "Involuntary"),
                ("productUnavailable", "Product unavailable"), ("other", "Other"),
            ] {
                let rows = churn.map {
                    let count = ($0["byReason"] as? [String: Any])?[field] as? Int ?? -1
                    return "chart,chart-churn,Churned: \(label),\($0["period"] as? String ?? ""),"
                        + SVGChart.number(Double(count))
                }
                #expect(lines.filter { $0.hasPrefix("chart,chart-churn,Churned: \(label),") } == rows)
            }
            let movement = try await apiPoints("mrr-movement")
            #expect(movement.count == 7)
            for (field, label) in [
                ("new", "MRR new"), ("churned", "MRR churned"), ("reactivation", "MRR reactivation"),
            ] {
                let name = reporting == nil ? "\(label) USD" : label
                let rows = movement.map { point -> String in
                    let figure =
                        reporting == nil
                        ? (point["byCurrency"] as? [[String: Any]] ?? []).first { $0["currency"] as? String == "USD" }
                        : point["reporting"] as? [String: Any]
                    let value = figure.map { SVGChart.number(Double($0[field] as? Int ?? -1) / 1000) } ?? "0"
                    return "chart,chart-mrr-movement,\(name),\(point["period"] as? String ?? ""),\(value)"
                }
                let shownRows = lines.filter { $0.hasPrefix("chart,chart-mrr-movement,\(name),") }
                if reporting != nil || !shownRows.isEmpty { #expect(shownRows == rows, "\(name)") }
            }
            return shown
        }

        // Hand-computed: three paid USD subscriptions at 9.99 bought today, one of them "pro".
        let all = try await compare("", reporting: nil)
        #expect(all["active-subscriptions"] == "3")
        #expect(all["mrr"] == "29.97 USD")
        #expect(all["revenue"] == "29.97 USD")
        #expect(all["new-customers"] == "3")
        let pro = try await compare("&productId=com.example.pro", reporting: nil)
        #expect(pro["active-subscriptions"] == "1")
        #expect(pro["mrr"] == "9.99 USD")

        let saved = try await harness.request(
            "PUT", "/v1/apps/\(app.appId)/analytics-settings", key: ServerHarness.adminKey,
            json: ["reportingCurrency": "USD"])
        #expect(saved.status == 200, "\(saved.text)")
        let reported = try await compare("&subscriptionGroup=group", reporting: "USD")
        #expect(reported["mrr"] == "29.97")
        #expect(reported["revenue"] == "29.97")
        let page = await client.send(.get, "/dashboard/apps/\(app.appId)?period=7&environment=Sandbox")
        #expect(page.text.contains(#"<span class="label">MRR (USD)</span> <span class="value">29.97</span>"#))
        #expect(!page.text.contains("needs the analytics API"))
        // Issue 15: one store's figures; every purchase here is the App Store's.
        let appStore = try await compare("&store=appStore", reporting: "USD")
        #expect(appStore["active-subscriptions"] == "3")
        #expect(appStore["mrr"] == "29.97")
        let googlePlay = try await compare("&store=googlePlay", reporting: "USD")
        #expect(googlePlay["active-subscriptions"] == "0")
        #expect(googlePlay["revenue"] == "0.00")
        #expect(page.text.contains(#"<label for="store">Store<select id="store" name="store">"#))
        let other = try await compare("&storefront=XYZ", reporting: "USD")
        #expect(other["active-subscriptions"] == "0")
        #expect(AnalyticsOverviewSource.amount(-1005) == "-1.005")
        #expect(AnalyticsOverviewSource.amount(7) == "0.007")
        #expect(AnalyticsOverviewSource.amount(12_340) == "12.34")
    }

    @Test("the stylesheet is served by the binary; pages link nothing else")
    func assets() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        var client = DashboardClient(harness.application.responder)
        let css = await client.send(.get, "/dashboard/assets/dashboard.css")
        #expect(css.status.code == 200)
        #expect(css.headers["Content-Type"] == "text/css; charset=utf-8")
        #expect(css.text == DashboardStylesheet.text)
        let page = await client.send(.get, "/dashboard/sign-in").text
        #expect(!page.contains("http://") && !page.contains("https://") && !page.contains("<script"))
    }
}
