import AppStoreModels
import Foundation
import Storage
import StorekeeperServer
import StorekeeperTesting
import Testing

/// The routes `storekeeper admin` needs besides the first ones (issue 14): listing an app's API
/// keys, removing a webhook endpoint, a test event to an endpoint, an app's recent
/// notifications. Each on SQLite, and on PostgreSQL where it reads or writes with new statements.
@Suite(.serialized)
struct OperatorRoutesTests {
    static var databases: [TestDatabase] {
        [.sqlite] + (TestDatabase.postgresURL.map { [.postgres($0)] } ?? [])
    }

    static let t0 = TestSigning.signedDate
    static let adminKey = ServerHarness.adminKey

    static func milliseconds(_ value: Any?) -> Int64? { (value as? NSNumber)?.int64Value }

    // MARK: Keys

    @Test("an app's keys are listed without the key or its hash, revoked ones with the instant", arguments: databases)
    func listAppKeys(database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database)
        defer { Task { await harness.stop() } }
        let appId = "keys-\(uniqueDigits())"
        let created = try await harness.request(
            "POST", "/v1/admin/apps", key: Self.adminKey,
            json: ["id": appId, "bundleId": "com.example", "environments": ["Sandbox"]])
        try #require(created.status == 201, "\(created.text)")
        harness.clock.set(Self.t0)
        let ios = try await harness.request(
            "POST", "/v1/admin/apps/\(appId)/keys", key: Self.adminKey, json: ["kind": "public", "label": "ios"])
        harness.clock.set(Self.t0.adding(milliseconds: 1000))
        let backend = try await harness.request(
            "POST", "/v1/admin/apps/\(appId)/keys", key: Self.adminKey, json: ["kind": "secret"])
        let iosId = try #require(ios.json["id"] as? String)
        let backendId = try #require(backend.json["id"] as? String)
        let backendKey = try #require(backend.json["key"] as? String)
        harness.clock.set(Self.t0.adding(milliseconds: 5000))
        #expect(try await harness.request("DELETE", "/v1/admin/keys/\(iosId)", key: Self.adminKey).status == 204)

        let listed = try await harness.request("GET", "/v1/admin/apps/\(appId)/keys", key: Self.adminKey)
        #expect(listed.status == 200, "\(listed.text)")
        let t = Self.t0.millisecondsSince1970
        #expect(
            listed.text
                == #"{"keys":[{"appId":"\#(appId)","createdAt":\#(t),"id":"\#(iosId)","kind":"public","#
                + #""label":"ios","prefix":"sk_pub_","revokedAt":\#(t + 5000)},"#
                + #"{"appId":"\#(appId)","createdAt":\#(t + 1000),"id":"\#(backendId)","kind":"secret","#
                + #""label":"","prefix":"sk_sec_"}]}"#)
        #expect(!listed.text.contains(backendKey))
        #expect(!listed.text.contains(APIKeys.hash(backendKey)))

        // The app's own secret key is no admin key; an unknown app is 404.
        let refused = try await harness.request("GET", "/v1/admin/apps/\(appId)/keys", key: backendKey)
        #expect(refused.status == 403)
        let unknown = try await harness.request("GET", "/v1/admin/apps/no-such-app/keys", key: Self.adminKey)
        #expect(unknown.status == 404)
        #expect(unknown.errorCode == "app_not_found")

        // Admin keys: those of no app, this run's among them (a shared PostgreSQL holds others').
        let admin = try await harness.request(
            "POST", "/v1/admin/keys", key: Self.adminKey, json: ["kind": "admin", "label": "ops"])
        let adminId = try #require(admin.json["id"] as? String)
        let admins = try await harness.request("GET", "/v1/admin/keys", key: Self.adminKey)
        #expect(admins.status == 200)
        let keys = try #require(admins.json["keys"] as? [[String: Any]])
        let mine = try #require(keys.first { $0["id"] as? String == adminId })
        #expect(Set(mine.keys) == ["id", "kind", "prefix", "label", "createdAt"])
        #expect(mine["kind"] as? String == "admin")
        #expect(mine["prefix"] as? String == "sk_adm_")
        #expect(mine["label"] as? String == "ops")
        #expect(Self.milliseconds(mine["createdAt"]) == t + 5000)
        #expect(keys.allSatisfy { $0["appId"] == nil })
    }

    // MARK: Webhook endpoints

    @Test("removing an endpoint removes its deliveries; a second removal is 404", arguments: databases)
    func removeEndpoint(database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database, webhookAllowedDestinations: ["127.0.0.1"])
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let other = try await harness.createApp()
        let added = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": "http://127.0.0.1:9/hooks"])
        let endpointId = try #require(added.json["id"] as? String)
        // A purchase queues a delivery to the endpoint.
        harness.clock.set(Self.t0.plus(days: 1))
        let id = uniqueDigits()
        let posted = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/ann/transactions", key: app.publicKey,
            json: [
                "signedTransaction": try AppStoreSigner(ca: harness.ca).transaction(
                    id: id, originalId: id, purchase: Self.t0, expires: Self.t0.plus(days: 30), signed: Self.t0)
            ])
        try #require(posted.status == 200, "\(posted.text)")
        let sequence = try #require(
            try await harness.store.read { reader -> Int64? in
                let customer = try reader.customer(appId: app.appId, .appUserId("ann"))
                return try customer.flatMap {
                    try reader.events(customerId: $0.id, after: nil, limit: 10).first?.sequence
                }
            })
        #expect(try await harness.store.read { try $0.outboxEntries(eventSequence: sequence) }.count == 1)

        // Another app's key cannot reach it, nor can the other app remove it as its own.
        let foreign = try await harness.request(
            "DELETE", "/v1/apps/\(app.appId)/webhooks/\(endpointId)", key: other.secretKey)
        #expect(foreign.status == 403)
        let misplaced = try await harness.request(
            "DELETE", "/v1/apps/\(other.appId)/webhooks/\(endpointId)", key: other.secretKey)
        #expect(misplaced.status == 404)
        #expect(misplaced.errorCode == "endpoint_not_found")

        let removed = try await harness.request(
            "DELETE", "/v1/apps/\(app.appId)/webhooks/\(endpointId)", key: Self.adminKey)
        #expect(removed.status == 204)
        #expect(removed.body.isEmpty)
        let list = try await harness.request("GET", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey)
        #expect(list.text == #"{"endpoints":[]}"#)
        #expect(try await harness.store.read { try $0.outboxEntries(eventSequence: sequence) }.isEmpty)
        let audit = try await harness.store.read { try $0.auditEntries(after: nil, limit: 10_000) }
        let entry = try #require(audit.last { $0.action == "webhook.delete" && $0.appId == app.appId })
        #expect(entry.detail == .object(["endpointId": .string(endpointId)]))

        let again = try await harness.request(
            "DELETE", "/v1/apps/\(app.appId)/webhooks/\(endpointId)", key: Self.adminKey)
        #expect(again.status == 404)
        #expect(again.errorCode == "endpoint_not_found")
    }

    @Test func testEventIsSignedAndAnswersWhatTheEndpointReplied() async throws {
        let receiver = try WebhookReceiver()
        let harness = try await ServerHarness(webhookAllowedDestinations: ["127.0.0.1"])
        defer {
            Task {
                await harness.stop()
                await receiver.stop()
            }
        }
        let app = try await harness.createApp()
        let secret = "whsec_test_0123456789abcdef"
        let added = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey,
            json: ["url": receiver.url, "secret": secret, "enabled": false])
        let endpointId = try #require(added.json["id"] as? String)
        harness.clock.set(Self.t0.plus(days: 2))
        let backlog = try await harness.store.read { try $0.outboxBacklog() }

        // Disabled endpoints may be tested (nothing is queued for them): before enabling one.
        let delivered = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks/\(endpointId)/test", key: Self.adminKey)
        #expect(delivered.status == 200, "\(delivered.text)")
        let eventId = try #require(delivered.json["eventId"] as? String)
        #expect(eventId.hasPrefix("evt_test_"))
        #expect(
            delivered.text
                == #"{"delivered":true,"endpointId":"\#(endpointId)","eventId":"\#(eventId)","response":"","status":200}"#
        )
        let sent = try #require(receiver.deliveries.first)
        #expect(receiver.deliveries.count == 1)
        let now = Self.t0.plus(days: 2)
        #expect(
            String(decoding: sent.body, as: UTF8.self)
                == #"{"appId":"\#(app.appId)","endpointId":"\#(endpointId)","id":"\#(eventId)","#
                + #""occurredAt":\#(now.millisecondsSince1970),"type":"TEST"}"#)
        #expect(sent.headers["Storekeeper-Event-Id"] == eventId)
        #expect(sent.headers["Storekeeper-Delivery-Attempt"] == "1")
        let signature = try #require(sent.headers[WebhookSignature.headerName])
        #expect(
            WebhookSignature.isValid(
                header: signature, body: sent.body, secret: secret, nowUnixSeconds: now.secondsSince1970))
        #expect(
            !WebhookSignature.isValid(
                header: signature, body: sent.body, secret: secret + "x", nowUnixSeconds: now.secondsSince1970))

        receiver.answer(503)
        let refused = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks/\(endpointId)/test", key: app.secretKey)
        #expect(refused.status == 200)
        let refusedId = try #require(refused.json["eventId"] as? String)
        #expect(refusedId != eventId)
        #expect(
            refused.text
                == #"{"delivered":false,"endpointId":"\#(endpointId)","error":"http_status_503","#
                + #""eventId":"\#(refusedId)","response":"","status":503}"#)

        // Nothing listens on port 9: no status, the failure's category.
        let closed = try await harness.request(
            "PUT", "/v1/apps/\(app.appId)/webhooks/\(endpointId)", key: app.secretKey,
            json: ["url": "http://127.0.0.1:9/hooks"])
        #expect(closed.status == 200)
        let unanswered = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks/\(endpointId)/test", key: app.secretKey)
        let unansweredId = try #require(unanswered.json["eventId"] as? String)
        #expect(
            unanswered.text
                == #"{"delivered":false,"endpointId":"\#(endpointId)","error":"connection_failed","#
                + #""eventId":"\#(unansweredId)"}"#)

        // Test events are not stored: the outbox is as it was. Unknown endpoints are 404.
        #expect(try await harness.store.read { try $0.outboxBacklog() } == backlog)
        let unknown = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks/we_nosuch/test", key: app.secretKey)
        #expect(unknown.status == 404)
        #expect(unknown.errorCode == "endpoint_not_found")
    }

    // MARK: Notifications

    @Test("recent notifications: newest first, by outcome and type, paged", arguments: databases)
    func recentNotifications(database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database)
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let signer = AppStoreSigner(ca: harness.ca)
        let path = "/v1/apps/\(app.appId)/notifications/appstore"
        let id = uniqueDigits()
        let transaction = try signer.transaction(
            id: id, originalId: id, purchase: Self.t0, expires: Self.t0.plus(days: 30), signed: Self.t0)
        let uuids = (0..<3).map { _ in UUID().uuidString.lowercased() }

        // Unclaimed (nobody owns the purchase yet), then TEST (recorded), then, once the app
        // posted the purchase for ann, a renewal applied to her.
        harness.clock.set(Self.t0.plus(days: 1))
        let subscribed = try await harness.request(
            "POST", path,
            json: [
                "signedPayload": try signer.notification(
                    .subscribed, .initialBuy, transaction: transaction, signed: Self.t0, uuid: uuids[0])
            ])
        #expect(subscribed.json["outcome"] as? String == "unclaimed")
        harness.clock.set(Self.t0.plus(days: 2))
        let test = try await harness.request(
            "POST", path, json: ["signedPayload": try signer.notification(.test, signed: Self.t0, uuid: uuids[1])])
        #expect(test.json["outcome"] as? String == "recorded")
        let posted = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/ann/transactions", key: app.publicKey,
            json: ["signedTransaction": transaction])
        #expect(posted.status == 200)
        harness.clock.set(Self.t0.plus(days: 3))
        let renewed = try await harness.request(
            "POST", path,
            json: [
                "signedPayload": try signer.notification(
                    .didChangeRenewalStatus, .autoRenewDisabled, transaction: transaction,
                    renewal: try signer.renewal(originalId: id, signed: Self.t0.plus(days: 3), autoRenew: false),
                    signed: Self.t0.plus(days: 3), uuid: uuids[2])
            ])
        #expect(renewed.json["outcome"] as? String == "applied", "\(renewed.text)")

        let rows = try await harness.store.read { reader in
            try reader.recentNotifications(appId: app.appId, NotificationFilter(limit: 10))
        }
        try #require(rows.count == 3)
        func view(_ row: NotificationSummary) -> String {
            var fields = [
                #""environment":"Sandbox""#, #""id":\#(row.id)"#, #""notificationType":"\#(row.type)""#,
                #""notificationUUID":"\#(row.notificationUUID)""#,
            ]
            if let original = row.originalTransactionId { fields.append(#""originalTransactionId":"\#(original)""#) }
            fields.append(#""outcome":"\#(row.outcome ?? "")""#)
            fields.append(#""receivedAt":\#(row.receivedAt.millisecondsSince1970)"#)
            fields.append(#""signedDate":\#(row.signedDate.millisecondsSince1970)"#)
            if let subtype = row.subtype { fields.append(#""subtype":"\#(subtype)""#) }
            return "{" + fields.joined(separator: ",") + "}"
        }
        #expect(rows.map(\.notificationUUID) == uuids.reversed())
        #expect(rows.map(\.outcome) == ["applied", "recorded", "unclaimed"])
        #expect(rows.map(\.type) == ["DID_CHANGE_RENEWAL_STATUS", "TEST", "SUBSCRIBED"])
        #expect(rows.map(\.subtype) == ["AUTO_RENEW_DISABLED", nil, "INITIAL_BUY"])
        #expect(rows.map(\.originalTransactionId) == [id, nil, id])
        #expect(
            rows.map(\.receivedAt) == [Self.t0.plus(days: 3), Self.t0.plus(days: 2), Self.t0.plus(days: 1)])
        #expect(rows[0].id > rows[1].id && rows[1].id > rows[2].id)

        let all = try await harness.request("GET", "/v1/apps/\(app.appId)/notifications", key: app.secretKey)
        #expect(all.status == 200)
        #expect(all.text == #"{"notifications":["# + rows.map(view).joined(separator: ",") + "]}")

        let unclaimed = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/notifications?outcome=unclaimed", key: Self.adminKey)
        #expect(unclaimed.text == #"{"notifications":["# + view(rows[2]) + "]}")
        let tests = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/notifications?type=TEST&outcome=recorded", key: app.secretKey)
        #expect(tests.text == #"{"notifications":["# + view(rows[1]) + "]}")
        let none = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/notifications?type=TEST&outcome=applied", key: app.secretKey)
        #expect(none.text == #"{"notifications":[]}"#)

        // Pages of two: the second continues after the first's last id and is the last.
        let first = try await harness.request("GET", "/v1/apps/\(app.appId)/notifications?limit=2", key: app.secretKey)
        #expect(
            first.text
                == #"{"nextCursor":"\#(rows[1].id)","notifications":["# + rows[0...1].map(view).joined(separator: ",")
                + "]}")
        let second = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/notifications?limit=2&cursor=\(rows[1].id)", key: app.secretKey)
        #expect(second.text == #"{"notifications":["# + view(rows[2]) + "]}")

        // Refusals: a public key, an unknown outcome, a malformed type or cursor.
        let publicKey = try await harness.request("GET", "/v1/apps/\(app.appId)/notifications", key: app.publicKey)
        #expect(publicKey.status == 403)
        for query in ["outcome=duplicate", "type=did_renew", "cursor=abc", "limit=0"] {
            let refused = try await harness.request(
                "GET", "/v1/apps/\(app.appId)/notifications?\(query)", key: app.secretKey)
            #expect(refused.status == 400, "\(query)")
            #expect(refused.errorCode == "invalid_query", "\(query)")
        }
    }
}
