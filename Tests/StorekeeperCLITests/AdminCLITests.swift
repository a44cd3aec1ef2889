import AppStoreModels
import Foundation
import Storage
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `storekeeper admin …` end to end (issue 14): the real binary against a real
/// `storekeeper serve` on a loopback port with a SQLite database, compared output for output.
///
/// The server runs without its webhook worker: the test is the worker that dead-letters the
/// delivery, so that `deliveries failed` and `replay` have one without waiting for the
/// backoff to outgrow `webhookMaxAgeSeconds`.
struct AdminCLITests {
    static let adminKey = "cli-admin-key-0123456789"

    let host = SecretsCLITests()

    /// The admin CLI with the server's URL and the key from a file, plus `arguments`.
    func admin(_ arguments: [String], url: String, keyFile: String) throws -> SecretsCLITests.Run {
        try host.run(["admin"] + arguments + ["--url", url, "--key-file", keyFile])
    }

    func json(_ run: SecretsCLITests.Run) throws -> [String: Any] {
        try #require(run.status == 0, "\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    static func instant(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    @Test func manageARunningServer() async throws {
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("store.sqlite").path
        let ca = directory.appendingPathComponent("ca").path
        #expect(try host.run(["ca", "init", ca]).status == 0)
        let keyFile = directory.appendingPathComponent("admin.key").path
        try host.writeKey(Self.adminKey, to: keyFile)
        let catalogFile = directory.appendingPathComponent("catalog.json").path
        try Data(
            #"{"products":[{"productId":"com.example.cli.monthly","kind":"AUTO_RENEWABLE","subscriptionGroup":"21000001","entitlementIds":["pro"]}],"version":7}"#
                .utf8
        ).write(to: URL(fileURLWithPath: catalogFile))

        let serve = ["serve", "--database", database, "--listen", "127.0.0.1:0"]
        let environment = [
            "STOREKEEPER_ADMIN_KEY": Self.adminKey, "STOREKEEPER_WEBHOOK_WORKER": "false",
            "STOREKEEPER_WEBHOOK_ALLOWED_DESTINATIONS": "127.0.0.1", "STOREKEEPER_SECRETS_KEY": SecretsCLITests.keyA,
        ]
        try await host.serveBriefly(serve, environment: environment) { url in
            func admin(_ arguments: [String]) throws -> SecretsCLITests.Run {
                try self.admin(arguments, url: url, keyFile: keyFile)
            }

            // An app with a root and an App Store Connect key, both from PEM files.
            let create = [
                "apps", "create", "--id", "cli-app", "--bundle-id", "com.example.cli", "--environment", "Sandbox",
                "--root", "\(ca)/root.pem", "--connect-key-file", "\(ca)/leaf.key.pem", "--connect-key-id",
                "KEY0000001", "--connect-issuer-id", "issuer-1", "--connect-base-url", "http://127.0.0.1:9",
            ]
            let created = try json(try admin(create + ["--json"]))
            #expect(created["id"] as? String == "cli-app")
            #expect(created["bundleId"] as? String == "com.example.cli")
            #expect(created["environments"] as? [String] == ["Sandbox"])
            #expect(created["rootCertificates"] as? [String] == ["CN=Storekeeper Test Root CA,O=Storekeeper Test"])
            #expect((created["appStoreConnect"] as? [String: Any])?["keyId"] as? String == "KEY0000001")
            #expect((created["version"] as? NSNumber)?.int64Value == 1)
            #expect(
                try admin(create)
                    == SecretsCLITests.Run(
                        status: 1, stdout: "", stderr: "error: app_exists (HTTP 409): An app with that id exists.\n"))

            let updated = try admin(["apps", "update", "cli-app", "--app-apple-id", "1234", "--if-version", "1"])
            #expect(
                updated
                    == SecretsCLITests.Run(
                        status: 0,
                        stdout: """
                            app cli-app (version 2)
                            bundle id: com.example.cli
                            app Apple id: 1234
                            environments: Sandbox
                            shared secret: not set
                            App Store Connect key: KEY0000001 (issuer issuer-1)
                            transfer policy: \(created["transferPolicy"] as? String ?? "?")
                            root certificates:
                              CN=Storekeeper Test Root CA,O=Storekeeper Test

                            """, stderr: ""))
            let stale = try admin(["apps", "update", "cli-app", "--app-apple-id", "99", "--if-version", "1"])
            #expect(stale.status == 1)
            #expect(stale.stdout == "")
            #expect(stale.stderr.hasPrefix("error: version_mismatch (HTTP 412): "))
            #expect(stale.stderr.split(separator: "\n").count == 1)
            #expect(
                try admin(["apps", "list"])
                    == SecretsCLITests.Run(
                        status: 0,
                        stdout: """
                            ID       BUNDLE           ENVIRONMENTS  ROOTS  VERSION
                            cli-app  com.example.cli  Sandbox       1      2

                            """, stderr: ""))

            // The catalog: a file saved from `catalog get --json` (with its version) goes back as is.
            let catalogTable = """
                catalog version 1
                PRODUCT                  KIND            GROUP     ENTITLEMENTS
                com.example.cli.monthly  AUTO_RENEWABLE  21000001  pro

                """
            #expect(
                try admin(["catalog", "put", "cli-app", catalogFile, "--if-version", "0"])
                    == SecretsCLITests.Run(status: 0, stdout: catalogTable, stderr: ""))
            #expect(
                try admin(["catalog", "get", "cli-app"])
                    == SecretsCLITests.Run(status: 0, stdout: catalogTable, stderr: ""))
            #expect(
                try admin(["catalog", "put", "cli-app", catalogFile, "--if-version", "0"]).stderr.hasPrefix(
                    "error: version_mismatch (HTTP 412): "))

            // Keys: shown once; a revoked admin key no longer opens anything.
            let publicKey = try json(try admin(["keys", "create", "--kind", "public", "--app", "cli-app", "--json"]))
            #expect(publicKey["kind"] as? String == "public")
            #expect(publicKey["appId"] as? String == "cli-app")
            #expect((publicKey["key"] as? String)?.hasPrefix("sk_pub_") == true)
            let publicKeyId = try #require(publicKey["id"] as? String)
            let listedKeys = try #require(
                try json(try admin(["keys", "list", "--app", "cli-app", "--json"]))["keys"] as? [[String: Any]])
            try #require(listedKeys.count == 1)
            #expect(Set(listedKeys[0].keys) == ["id", "appId", "kind", "prefix", "label", "createdAt"])
            #expect(listedKeys[0]["id"] as? String == publicKeyId)
            #expect(listedKeys[0]["kind"] as? String == "public")
            #expect(listedKeys[0]["prefix"] as? String == "sk_pub_")
            let keyCreated = Self.instant(try #require((listedKeys[0]["createdAt"] as? NSNumber)?.int64Value))
            #expect(
                try admin(["keys", "list", "--app", "cli-app"])
                    == SecretsCLITests.Run(
                        status: 0,
                        stdout: """
                            ID\(String(repeating: " ", count: publicKeyId.count - 2))  KIND    PREFIX   LABEL  \
                            CREATED\(String(repeating: " ", count: keyCreated.count - 7))  REVOKED
                            \(publicKeyId)  public  sk_pub_  -      \(keyCreated)  -

                            """, stderr: ""))
            let adminKey = try json(try admin(["keys", "create", "--kind", "admin", "--label", "ops", "--json"]))
            let adminKeyId = try #require(adminKey["id"] as? String)
            let adminSecret = try #require(adminKey["key"] as? String)
            #expect(adminSecret.hasPrefix("sk_adm_"))
            #expect(
                try host.run(["admin", "apps", "list", "--url", url, "--key", adminSecret, "--json"]).status == 0)
            #expect(
                try admin(["keys", "revoke", adminKeyId])
                    == SecretsCLITests.Run(status: 0, stdout: "revoked key \(adminKeyId)\n", stderr: ""))
            let refused = try host.run(["admin", "apps", "list", "--url", url, "--key", adminSecret])
            #expect(refused.status == 1)
            #expect(refused.stderr.hasPrefix("error: unauthorized (HTTP 401): "))
            #expect(!refused.stderr.contains(adminSecret))
            // The key from the environment, and none at all.
            #expect(
                try host.run(
                    ["admin", "apps", "list", "--url", url], environment: ["STOREKEEPER_ADMIN_KEY": Self.adminKey]
                )
                .status == 0)
            let keyless = try host.run(["admin", "apps", "list", "--url", url])
            #expect(keyless.status == 2)
            #expect(
                keyless.stderr.hasPrefix("no admin key: give --key, --key-file or STOREKEEPER_ADMIN_KEY\n\nusage: "))

            // A webhook endpoint (nothing listens on port 9).
            let endpoint = try json(
                try admin(["webhooks", "add", "cli-app", "--endpoint-url", "http://127.0.0.1:9/hook", "--json"]))
            let endpointId = try #require(endpoint["id"] as? String)
            #expect(endpointId.hasPrefix("we_"))
            #expect((endpoint["secret"] as? String)?.hasPrefix("whsec_") == true)
            #expect(
                try admin(["webhooks", "list", "cli-app"])
                    == SecretsCLITests.Run(
                        status: 0,
                        stdout: """
                            ID\(String(repeating: " ", count: endpointId.count - 2))  ENABLED  VERSION  URL
                            \(endpointId)  yes      1        http://127.0.0.1:9/hook

                            """, stderr: ""))

            // A test event: nothing listens on port 9, so no answer and exit 1.
            let tested = try admin(["webhooks", "test", "cli-app", endpointId, "--json"])
            #expect(tested.status == 1)
            #expect(tested.stderr == "error: the endpoint did not accept the test event\n")
            let testResult = try #require(
                try JSONSerialization.jsonObject(with: Data(tested.stdout.utf8)) as? [String: Any])
            let testEventId = try #require(testResult["eventId"] as? String)
            #expect(testEventId.hasPrefix("evt_test_"))
            #expect(testResult["delivered"] as? Bool == false)
            #expect(testResult["error"] as? String == "connection_failed")
            #expect(testResult["endpointId"] as? String == endpointId)
            #expect(testResult["status"] == nil)
            let testTable = try admin(["webhooks", "test", "cli-app", endpointId])
            #expect(testTable.status == 1)
            #expect(testTable.stdout.hasPrefix("test event evt_test_"))
            #expect(
                testTable.stdout.hasSuffix(" to endpoint \(endpointId)\nstatus: no answer\nerror: connection_failed\n"))
            #expect(
                try admin(["webhooks", "test", "cli-app", "we_nosuch"])
                    == SecretsCLITests.Run(
                        status: 1, stdout: "",
                        stderr: "error: endpoint_not_found (HTTP 404): No such webhook endpoint.\n"
                    ))

            // Notifications: none yet, then a TEST notification signed by the app's CA (recorded).
            #expect(
                try admin(["notifications", "recent", "cli-app"])
                    == SecretsCLITests.Run(
                        status: 0,
                        stdout: """
                            ID  RECEIVED  TYPE  SUBTYPE  ENVIRONMENT  ORIGINAL TRANSACTION  OUTCOME
                            (none)

                            """, stderr: ""))
            let notificationUUID = UUID().uuidString.lowercased()
            let signedNotification = try CLITests().run(
                [
                    "jws", "sign", "--key", "\(ca)/leaf.key.pem", "--chain",
                    "\(ca)/leaf.der,\(ca)/intermediate.der,\(ca)/root.der",
                ],
                stdin: """
                    {"notificationType":"TEST","notificationUUID":"\(notificationUUID)","version":"2.0",\
                    "signedDate":\((Int64(Date().timeIntervalSince1970) - 60) * 1000),\
                    "data":{"bundleId":"com.example.cli","environment":"Sandbox"}}
                    """
            ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            var notify = URLRequest(url: URL(string: url + "/v1/apps/cli-app/notifications/appstore")!)
            notify.httpMethod = "POST"
            notify.setValue("application/json", forHTTPHeaderField: "Content-Type")
            notify.httpBody = try JSONSerialization.data(withJSONObject: ["signedPayload": signedNotification])
            let (notified, notifyResponse) = try await URLSession.shared.data(for: notify)
            #expect(
                (notifyResponse as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: notified, as: UTF8.self))")
            let recent = try json(try admin(["notifications", "recent", "cli-app", "--type", "TEST", "--json"]))
            let listedNotifications = try #require(recent["notifications"] as? [[String: Any]])
            try #require(listedNotifications.count == 1)
            #expect(listedNotifications[0]["notificationUUID"] as? String == notificationUUID)
            #expect(listedNotifications[0]["notificationType"] as? String == "TEST")
            #expect(listedNotifications[0]["outcome"] as? String == "recorded")
            #expect(listedNotifications[0]["environment"] as? String == "Sandbox")
            #expect(recent["nextCursor"] == nil)
            let notificationId = try #require((listedNotifications[0]["id"] as? NSNumber)?.int64Value)
            let received = Self.instant(try #require((listedNotifications[0]["receivedAt"] as? NSNumber)?.int64Value))
            let idColumn = String(notificationId).padding(
                toLength: max(2, String(notificationId).count), withPad: " ", startingAt: 0)
            #expect(
                try admin(["notifications", "recent", "cli-app", "--outcome", "recorded"])
                    == SecretsCLITests.Run(
                        status: 0,
                        stdout: """
                            ID\(String(repeating: " ", count: max(0, String(notificationId).count - 2)))  \
                            RECEIVED\(String(repeating: " ", count: received.count - 8))  TYPE  SUBTYPE  ENVIRONMENT  \
                            ORIGINAL TRANSACTION  OUTCOME
                            \(idColumn)  \(received)  TEST  -        Sandbox      -                     recorded

                            """, stderr: ""))
            #expect(
                try admin(["notifications", "recent", "cli-app", "--outcome", "applied"]).stdout.hasSuffix("\n(none)\n")
            )
            let badOutcome = try admin(["notifications", "recent", "cli-app", "--outcome", "duplicate"])
            #expect(badOutcome.status == 2)
            #expect(badOutcome.stderr.contains("duplicate"))

            // A purchase, posted as the app would with its public key.
            let now = (Int64(Date().timeIntervalSince1970) - 60) * 1000
            let expires = now + 30 * 86_400_000
            let payload = """
                {"bundleId":"com.example.cli","environment":"Sandbox","productId":"com.example.cli.monthly",\
                "transactionId":"2000000000000001","originalTransactionId":"2000000000000001",\
                "subscriptionGroupIdentifier":"21000001","type":"Auto-Renewable Subscription",\
                "purchaseDate":\(now),"originalPurchaseDate":\(now),"expiresDate":\(expires),"signedDate":\(now),\
                "inAppOwnershipType":"PURCHASED","transactionReason":"PURCHASE","quantity":1,"storefront":"DEU"}
                """
            let token = try CLITests().run(
                [
                    "jws", "sign", "--key", "\(ca)/leaf.key.pem", "--chain",
                    "\(ca)/leaf.der,\(ca)/intermediate.der,\(ca)/root.der",
                ], stdin: payload
            ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            var request = URLRequest(url: URL(string: url + "/v1/apps/cli-app/customers/user-1/transactions")!)
            request.httpMethod = "POST"
            request.setValue("Bearer \(publicKey["key"] as! String)", forHTTPHeaderField: "Authorization")
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: ["signedTransaction": token])
            let (body, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: body, as: UTF8.self))")

            // The customer, with the why of each entitlement.
            let customer = try json(try admin(["customers", "show", "cli-app", "user-1", "--json"]))
            let pro = try #require((customer["entitlements"] as? [String: Any])?["pro"] as? [String: Any])
            #expect(pro["productId"] as? String == "com.example.cli.monthly")
            #expect((pro["expiresDate"] as? NSNumber)?.int64Value == expires)
            let reason = try #require(pro["reason"] as? String)
            let evaluatedAt = try #require((customer["evaluatedAt"] as? NSNumber)?.int64Value)
            let expiresText = Self.instant(expires)
            #expect(
                try admin(["customers", "show", "cli-app", "user-1"])
                    == SecretsCLITests.Run(
                        status: 0,
                        stdout: """
                            customer user-1 (Sandbox), evaluated \(Self.instant(evaluatedAt))
                            ENTITLEMENT  ACTIVE  PRODUCT                  EXPIRES\(String(repeating: " ", count: expiresText.count - 7))  WHY
                            pro          yes     com.example.cli.monthly  \(expiresText)  \(reason)

                            """, stderr: ""))
            let events = try json(try admin(["customers", "events", "cli-app", "user-1", "--json"]))
            let eventTypes = (events["events"] as? [[String: Any]])?.compactMap {
                ($0["event"] as? [String: Any])?["type"] as? String
            }
            #expect(eventTypes == ["INITIAL_PURCHASE"])
            let eventSequence = try #require(
                ((events["events"] as? [[String: Any]])?.first?["sequence"] as? NSNumber)?.int64Value)
            let eventTable = try admin(["customers", "events", "cli-app", "user-1"])
            #expect(eventTable.status == 0)
            let eventRow = eventTable.stdout.split(separator: "\n").last?.split(separator: " ").map(String.init) ?? []
            #expect(eventRow.count == 5)
            #expect(eventRow.first == String(eventSequence))
            #expect(Array(eventRow.dropFirst(2)) == ["INITIAL_PURCHASE", "com.example.cli.monthly", "Sandbox"])
            let facts = try admin(["customers", "facts", "cli-app", "user-1"])
            #expect(facts.status == 0)
            #expect(facts.stdout.hasPrefix("SEQUENCE  KIND"))
            #expect(facts.stdout.contains("  Sandbox      2000000000000001  \(Self.instant(now))\n"))

            // One delivery, failed by the test acting as the worker, listed, then replayed.
            #expect(
                try admin(["deliveries", "failed", "cli-app"])
                    == SecretsCLITests.Run(
                        status: 0, stdout: "DELIVERY  ENDPOINT  EVENT  ATTEMPTS  ERROR  DEAD-LETTERED\n(none)\n",
                        stderr: ""))
            let deadLetteredAt = try await deadLetterEveryDelivery(database)
            let failed = try json(try admin(["deliveries", "failed", "cli-app", "--json"]))
            let deliveries = try #require(failed["deliveries"] as? [[String: Any]])
            try #require(deliveries.count == 1)
            let deliveryId = try #require((deliveries[0]["deliveryId"] as? NSNumber)?.int64Value)
            #expect(deliveries[0]["endpointId"] as? String == endpointId)
            #expect((deliveries[0]["attempts"] as? NSNumber)?.intValue == 1)
            #expect(deliveries[0]["lastError"] as? String == "connection_refused")
            #expect((deliveries[0]["deadLetteredAt"] as? NSNumber)?.int64Value == deadLetteredAt.millisecondsSince1970)
            #expect((deliveries[0]["eventSequence"] as? NSNumber)?.int64Value == eventSequence)
            let table = try admin(["deliveries", "failed", "cli-app"])
            #expect(
                table.stdout.split(separator: "\n").last.map(String.init)
                    == [
                        String(deliveryId).padding(toLength: 8, withPad: " ", startingAt: 0), endpointId,
                        String(eventSequence).padding(toLength: 5, withPad: " ", startingAt: 0), "1       ",
                        "connection_refused", Self.instant(deadLetteredAt.millisecondsSince1970),
                    ].joined(separator: "  "))
            #expect(
                try admin(["deliveries", "replay", "cli-app", String(deliveryId)])
                    == SecretsCLITests.Run(status: 0, stdout: "delivery \(deliveryId) queued again\n", stderr: ""))
            let afterReplay = try json(try admin(["deliveries", "failed", "cli-app", "--json"]))
            // Queued again: attempts from 0, no longer dead-lettered (its last error stays listed).
            let replayed = try #require((afterReplay["deliveries"] as? [[String: Any]])?.first)
            #expect((replayed["attempts"] as? NSNumber)?.intValue == 0)
            #expect(replayed["deadLetteredAt"] == nil || replayed["deadLetteredAt"] is NSNull)
            #expect(
                try admin(["deliveries", "replay", "cli-app", String(deliveryId)])
                    == SecretsCLITests.Run(
                        status: 1, stdout: "",
                        stderr: "error: delivery_not_found (HTTP 404): No dead-lettered delivery with this id.\n"))

            // Removing the endpoint removes its deliveries with it.
            #expect(
                try admin(["webhooks", "remove", "cli-app", endpointId])
                    == SecretsCLITests.Run(status: 0, stdout: "removed endpoint \(endpointId)\n", stderr: ""))
            #expect(
                try admin(["webhooks", "list", "cli-app"])
                    == SecretsCLITests.Run(status: 0, stdout: "ID  ENABLED  VERSION  URL\n(none)\n", stderr: ""))
            #expect(
                try admin(["deliveries", "failed", "cli-app"]).stdout
                    == "DELIVERY  ENDPOINT  EVENT  ATTEMPTS  ERROR  DEAD-LETTERED\n(none)\n")
            #expect(
                try admin(["webhooks", "remove", "cli-app", endpointId, "--json"])
                    == SecretsCLITests.Run(
                        status: 1, stdout: "",
                        stderr: "error: endpoint_not_found (HTTP 404): No such webhook endpoint.\n"
                    ))
        }
    }

    /// What the webhook worker does when a delivery fails past its age limit: claims every due
    /// delivery and dead-letters it, in the server's database (SQLite lets two processes write
    /// it in turn).
    func deadLetterEveryDelivery(_ database: String) async throws -> Timestamp {
        let store = try await SQLiteStore.open(path: database)
        let now = Timestamp(millisecondsSince1970: (Int64(Date().timeIntervalSince1970) + 1) * 1000)
        let count = try await store.write { transaction -> Int in
            let claimed = try transaction.claimDeliveries(
                endpointId: nil, owner: "admin-cli-test", now: now, leaseMilliseconds: 60_000, queues: 10,
                batchSize: 10, maxAttempts: 10)
            for delivery in claimed {
                _ = try transaction.markFailed(
                    id: delivery.id, lease: delivery.lease, error: "connection_refused", retryAt: nil, at: now)
            }
            return claimed.count
        }
        await store.close()
        #expect(count == 1)
        return now
    }
}
