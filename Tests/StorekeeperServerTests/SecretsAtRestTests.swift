import AppStoreModels
import AppStoreTrust
import Foundation
import SecretSealing
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Synchronization
import Testing

@testable import Storage

/// Secrets at rest (issue 11, defect 8): the shared secret, the App Store Connect private key
/// and webhook signing secrets are stored sealed (AES-256-GCM under the secrets key), never in
/// clear; rotation, a missing key, a wrong key and altered ciphertext are handled with clear
/// errors.
@Suite(.serialized)
struct SecretsAtRestTests {
    static let engines: [StoreEngine] = TestDatabase.postgresURL == nil ? [.sqlite] : [.sqlite, .postgres]

    /// What an app is created with, and where to look for it.
    struct AppSecrets {
        let sharedSecret = "shared-\(UUID().uuidString)"
        let webhookSecret = "whsec-\(UUID().uuidString)"
        let privateKeyPEM = try! PrivateKey.generateP256().pkcs8PEM

        /// Every string that must not be found in the database: the shared secret, the webhook
        /// secret and each base64 line of the private key (the PEM is stored inside JSON, where
        /// its newlines are escaped).
        var needles: [String] {
            [sharedSecret, webhookSecret]
                + privateKeyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
        }
    }

    /// Creates an app with a shared secret and an App Store Connect key, and a webhook endpoint
    /// with a chosen secret, through the APIs.
    func createApp(_ harness: ServerHarness, _ secrets: AppSecrets, webhookURL: String = "http://127.0.0.1:9/hooks")
        async throws -> ServerHarness.AppKeys
    {
        let app = try await harness.createApp(settings: [
            "sharedSecret": secrets.sharedSecret,
            "appStoreConnect": ["keyId": "KEY0000001", "issuerId": "issuer", "privateKeyPEM": secrets.privateKeyPEM],
        ])
        let hook = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey,
            json: ["url": webhookURL, "secret": secrets.webhookSecret])
        #expect(hook.status == 201, "\(hook.text)")
        #expect(hook.json["secret"] as? String == secrets.webhookSecret, "shown once, on creation")
        return app
    }

    @Test(arguments: engines)
    func databaseHoldsNoSecretInClear(engine: StoreEngine) async throws {
        let database = try await OwnDatabase.make(engine)
        defer { database.drop() }
        let key = try SecretsKey.generate()
        let harness = try await ServerHarness(
            secrets: StoredSecrets(sealer: SecretSealer(key: key)), opened: (try await database.open(), {}),
            webhookAllowedDestinations: ["127.0.0.1"])
        let secrets = AppSecrets()
        let app = try await createApp(harness, secrets)
        // An update that changes something else keeps the sealed values as they are.
        let updated = try await harness.request(
            "PUT", "/v1/admin/apps/\(app.appId)", key: ServerHarness.adminKey, json: ["onlineVerification": false])
        #expect(updated.status == 200, "\(updated.text)")

        // Nothing the admin and app APIs answer holds a secret.
        for path in ["/v1/admin/apps/\(app.appId)", "/v1/admin/apps"] {
            let answer = try await harness.request("GET", path, key: ServerHarness.adminKey)
            #expect(answer.status == 200)
            for needle in secrets.needles + ["sk1:"] { #expect(!answer.text.contains(needle), "\(path)") }
        }
        let hooks = try await harness.request("GET", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey)
        #expect(hooks.status == 200)
        for needle in secrets.needles + ["sk1:"] { #expect(!hooks.text.contains(needle)) }

        // The raw values are sealed under the key, named by its id.
        let raw = try await database.rawSecrets(appId: app.appId)
        #expect(raw.count == 3)
        for value in raw { #expect(value.hasPrefix("sk1:\(key.id):"), "\(value.prefix(24))") }

        // And the bytes of the database hold none of the secrets.
        await harness.stop()
        let contents = try await database.rawContents()
        #expect(contents.count > 1000)
        for needle in secrets.needles { #expect(!contents.contains(needle), "found in clear: \(needle.prefix(12))…") }
        #expect(contents.contains("sk1:\(key.id):"))
    }

    /// Rotation lists the apps and then saves each resealed: an admin write committed through
    /// another instance in between must survive (the row is re-read under its lock). Only
    /// PostgreSQL has concurrent writers; on SQLite the single writer orders them anyway.
    @Test(arguments: engines.filter { $0 == .postgres })
    func rotationKeepsAnAdminWriteCommittedWhileItRan(engine: StoreEngine) async throws {
        let database = try await OwnDatabase.make(engine)
        defer { database.drop() }
        let oldKey = try SecretsKey.generate()
        let newKey = try SecretsKey.generate()
        let first = try await ServerHarness(
            secrets: StoredSecrets(sealer: SecretSealer(key: oldKey)), opened: (try await database.open(), {}),
            webhookAllowedDestinations: ["127.0.0.1"])
        let app = try await createApp(first, AppSecrets())
        await first.stop()

        let store = try await database.open()
        let admin = try await database.open()
        let locked = Mutex(false)
        // The admin write (another instance) holds the app's row while rotation lists the apps.
        let write = Task {
            try await admin.write { transaction in
                var record = try #require(try transaction.lockApp(id: app.appId))
                locked.withLock { $0 = true }
                Thread.sleep(forTimeInterval: 1)
                record.bundleId = "com.example.changed-during-rotation"
                try transaction.saveApp(record, at: TestSigning.signedDate)
            }
        }
        while !locked.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        let rotating = StoredSecrets(sealer: SecretSealer(key: newKey, alsoOpening: [oldKey]))
        #expect(try await rotating.resealAll(store, at: TestSigning.signedDate) == 3)
        try await write.value
        await admin.close()

        let stored = try #require(try await store.read { try $0.app(id: app.appId) })
        #expect(stored.bundleId == "com.example.changed-during-rotation")
        let inventory = try await store.read { try StoredSecretsInventory(reading: $0) }
        #expect(inventory.clear == [])
        #expect(inventory.sealed.keys.sorted() == [newKey.id])
        await store.close()
    }

    @Test(arguments: engines)
    func rotationResealsEverythingAndTheNewKeyAloneServes(engine: StoreEngine) async throws {
        let database = try await OwnDatabase.make(engine)
        defer { database.drop() }
        let oldKey = try SecretsKey.generate()
        let newKey = try SecretsKey.generate()
        let secrets = AppSecrets()
        let receiver = try WebhookReceiver()
        defer { Task { await receiver.stop() } }

        let first = try await ServerHarness(
            secrets: StoredSecrets(sealer: SecretSealer(key: oldKey)), opened: (try await database.open(), {}),
            webhookAllowedDestinations: ["127.0.0.1"])
        let app = try await createApp(first, secrets, webhookURL: receiver.url)
        await first.stop()

        // Rotation: old and new key for reading, the new one for sealing, one transaction.
        let store = try await database.open()
        let rotating = StoredSecrets(sealer: SecretSealer(key: newKey, alsoOpening: [oldKey]))
        #expect(try await rotating.resealAll(store, at: TestSigning.signedDate) == 3)
        let inventory = try await store.read { try StoredSecretsInventory(reading: $0) }
        #expect(inventory.clear == [])
        #expect(inventory.malformed == [])
        #expect(inventory.sealed.keys.sorted() == [newKey.id])
        #expect(
            Set(inventory.sealed[newKey.id] ?? [])
                == [
                    StoredSecrets.sharedSecret(appId: app.appId), StoredSecrets.privateKey(appId: app.appId),
                    try #require(
                        inventory.sealed[newKey.id]?.first { $0.components.contains("webhooks") }),
                ])
        // Running it again changes nothing: everything is under the new key already.
        #expect(try await rotating.resealAll(store, at: TestSigning.signedDate) == 0)
        // The old key alone no longer opens anything.
        let oldOnly = await #expect(throws: SecretsError.self) {
            try await StoredSecrets(sealer: SecretSealer(key: oldKey)).prepare(store, at: TestSigning.signedDate)
        }
        #expect(
            oldOnly
                == SecretsError(
                    .unknownKey,
                    "the database holds 3 secrets sealed under key \(newKey.id), which is not the configured key (\(oldKey.id))"
                ))

        // Restart with the new key only.
        let newOnly = StoredSecrets(sealer: SecretSealer(key: newKey))
        let preparation = try await newOnly.prepare(store, at: TestSigning.signedDate)
        #expect(preparation == StoredSecrets.Preparation(sealedNow: 0, clearWithoutKey: 0, unreadable: []))
        let second = try await ServerHarness(
            ca: first.ca, secrets: newOnly, opened: (store, {}), webhookAllowedDestinations: ["127.0.0.1"])
        defer { Task { await second.stop() } }
        let runtime = try await second.application.ingestion.apps.runtime(appId: app.appId)
        #expect(runtime.record.sharedSecret == secrets.sharedSecret)
        #expect(runtime.settings.appStoreConnect?.privateKeyPEM == secrets.privateKeyPEM)

        // The shared secret still authenticates V1 notifications...
        let v1 = try await second.request(
            "POST", "/v1/apps/\(app.appId)/notifications/appstore",
            json: v1Body(password: secrets.sharedSecret, transactionId: uniqueDigits()))
        #expect(v1.status == 200, "\(v1.text)")
        // ...and webhooks are still signed with the endpoint's secret.
        let signer = AppStoreSigner(ca: second.ca)
        let id = uniqueDigits()
        let t0 = TestSigning.signedDate
        let purchase = try await second.request(
            "POST", "/v1/apps/\(app.appId)/customers/rotated/transactions", key: app.publicKey,
            json: [
                "signedTransaction": try signer.transaction(
                    id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0)
            ])
        #expect(purchase.status == 200, "\(purchase.text)")
        #expect(await second.application.webhookDeliverer.deliverDue() == 1)
        let delivery = try #require(receiver.deliveries.first)
        let header = try #require(delivery.headers[WebhookSignature.headerName])
        #expect(
            WebhookSignature.isValid(
                header: header, body: delivery.body, secret: secrets.webhookSecret,
                nowUnixSeconds: second.clock.now.secondsSince1970))
    }

    @Test func startingWithSealedSecretsAndNoKeyFailsClearly() async throws {
        let database = try await OwnDatabase.make(.sqlite)
        defer { database.drop() }
        let key = try SecretsKey.generate()
        let harness = try await ServerHarness(
            secrets: StoredSecrets(sealer: SecretSealer(key: key)), opened: (try await database.open(), {}),
            webhookAllowedDestinations: ["127.0.0.1"])
        _ = try await createApp(harness, AppSecrets())
        await harness.stop()
        let store = try await database.open()
        defer { Task { await store.close() } }
        let missing = await #expect(throws: SecretsError.self) {
            try await StoredSecrets.keyless.prepare(store, at: TestSigning.signedDate)
        }
        #expect(
            missing
                == SecretsError(
                    .keyMissing, "the database holds 3 sealed secrets (key \(key.id)) and no secrets key is configured"
                ))
        let wrong = try SecretsKey.generate()
        let unknown = await #expect(throws: SecretsError.self) {
            try await StoredSecrets(sealer: SecretSealer(key: wrong)).prepare(store, at: TestSigning.signedDate)
        }
        #expect(
            unknown
                == SecretsError(
                    .unknownKey,
                    "the database holds 3 secrets sealed under key \(key.id), which is not the configured key (\(wrong.id))"
                ))
    }

    @Test func alteredCiphertextIsRefusedNotUsed() async throws {
        let harness = try await ServerHarness(webhookAllowedDestinations: ["127.0.0.1"])
        defer { Task { await harness.stop() } }
        let secrets = AppSecrets()
        let app = try await createApp(harness, secrets)
        // Flip one bit of the sealed shared secret's ciphertext, as stored. (Expectations stay
        // outside store closures: those run on the store's threads, outside the test.)
        var record = try #require(try await harness.store.read { try $0.app(id: app.appId) })
        let sealed = try #require(record.sharedSecret)
        let prefix = String(sealed.prefix("sk1:".count + 16 + 1))
        var body = Array(try #require(Data(base64Encoded: String(sealed.dropFirst(prefix.count)))))
        body[14] ^= 0x01
        record.sharedSecret = prefix + Data(body).base64EncodedString()
        let tampered = record
        _ = try await harness.store.write { try $0.saveApp(tampered, at: TestSigning.signedDate) }
        harness.application.ingestion.apps.invalidate(appId: app.appId)

        let runtime = await #expect(throws: IngestionError.self) {
            try await harness.application.ingestion.apps.runtime(appId: app.appId)
        }
        #expect(runtime?.code == .appNotConfigured)
        #expect(runtime?.message == "The app's stored secrets cannot be opened with this server's secrets key.")
        // A V1 notification is refused as a configuration problem, not compared with garbage.
        let v1 = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/notifications/appstore",
            json: v1Body(password: secrets.sharedSecret, transactionId: uniqueDigits()))
        #expect(v1.status == 409)
        #expect(v1.errorCode == "app_not_configured")
        // The startup check names the field and starts anyway (the other apps still work).
        let preparation = try await harness.secrets.prepare(harness.store, at: TestSigning.signedDate)
        #expect(preparation.unreadable.contains(StoredSecrets.sharedSecret(appId: app.appId)))
        #expect(!preparation.unreadable.contains(StoredSecrets.privateKey(appId: app.appId)))
        // Setting the secret again repairs the app.
        let repaired = try await harness.request(
            "PUT", "/v1/admin/apps/\(app.appId)", key: ServerHarness.adminKey,
            json: ["sharedSecret": secrets.sharedSecret])
        #expect(repaired.status == 200, "\(repaired.text)")
        let again = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/notifications/appstore",
            json: v1Body(password: secrets.sharedSecret, transactionId: uniqueDigits()))
        #expect(again.status == 200, "\(again.text)")
    }

    @Test func sealedValueCopiedToAnotherAppDoesNotOpen() async throws {
        let harness = try await ServerHarness(webhookAllowedDestinations: ["127.0.0.1"])
        defer { Task { await harness.stop() } }
        let first = try await createApp(harness, AppSecrets())
        let second = try await createApp(harness, AppSecrets())
        let source = try #require(try await harness.store.read { try $0.app(id: first.appId) })
        var target = try #require(try await harness.store.read { try $0.app(id: second.appId) })
        #expect(source.sharedSecret?.hasPrefix("sk1:") == true)
        target.sharedSecret = source.sharedSecret
        let moved = target
        _ = try await harness.store.write { try $0.saveApp(moved, at: TestSigning.signedDate) }
        harness.application.ingestion.apps.invalidate(appId: second.appId)
        let error = await #expect(throws: IngestionError.self) {
            try await harness.application.ingestion.apps.runtime(appId: second.appId)
        }
        #expect(error?.code == .appNotConfigured)
    }

    /// A database from before sealing: clear values are read as they are, counted without a
    /// key, and sealed by the first start with one.
    @Test func clearSecretsAreSealedOnTheFirstStartWithAKey() async throws {
        let database = try await OwnDatabase.make(.sqlite)
        defer { database.drop() }
        let store = try await database.open()
        defer { Task { await store.close() } }
        let secrets = AppSecrets()
        let appId = "legacy-\(uniqueDigits())"
        let settings = AppSettings(
            appStoreConnect: AppStoreConnectCredentials(
                keyId: "KEY0000001", issuerId: "issuer", privateKeyPEM: secrets.privateKeyPEM))
        try await store.write { transaction in
            try transaction.saveApp(
                AppRecord(
                    id: appId, bundleId: "com.example", environments: [.sandbox], sharedSecret: secrets.sharedSecret,
                    settings: settings.jsonValue), at: TestSigning.signedDate)
            try transaction.saveWebhookEndpoint(
                WebhookEndpoint(
                    id: "we_legacy", appId: appId, url: "http://127.0.0.1:9/", secret: secrets.webhookSecret),
                at: TestSigning.signedDate)
        }
        #expect(
            try await StoredSecrets.keyless.prepare(store, at: TestSigning.signedDate)
                == StoredSecrets.Preparation(sealedNow: 0, clearWithoutKey: 3, unreadable: []))
        // Without a key the clear values still serve.
        let keyless = AppRuntimes(store: store, clock: .system, connections: { _, _, _ in nil })
        #expect(try await keyless.runtime(appId: appId).record.sharedSecret == secrets.sharedSecret)

        let key = try SecretsKey.generate()
        let sealing = StoredSecrets(sealer: SecretSealer(key: key))
        #expect(
            try await sealing.prepare(store, at: TestSigning.signedDate)
                == StoredSecrets.Preparation(sealedNow: 3, clearWithoutKey: 0, unreadable: []))
        let raw = try await database.rawSecrets(appId: appId)
        #expect(raw.count == 3)
        for value in raw { #expect(value.hasPrefix("sk1:\(key.id):")) }
        let runtimes = AppRuntimes(store: store, clock: .system, connections: { _, _, _ in nil }, secrets: sealing)
        let runtime = try await runtimes.runtime(appId: appId)
        #expect(runtime.record.sharedSecret == secrets.sharedSecret)
        #expect(runtime.settings.appStoreConnect?.privateKeyPEM == secrets.privateKeyPEM)
        let endpoint = try #require(try await store.read { try $0.webhookEndpoints(appId: appId) }.first)
        #expect(try sealing.signingSecret(of: endpoint) == secrets.webhookSecret)
        // A second start finds nothing left to seal.
        #expect(
            try await sealing.prepare(store, at: TestSigning.signedDate)
                == StoredSecrets.Preparation(sealedNow: 0, clearWithoutKey: 0, unreadable: []))
    }

    /// A worker that cannot open an endpoint's secret sends nothing (never an unsigned or
    /// wrongly signed delivery) and records why; the delivery is retried.
    @Test func delivererWithoutTheKeySendsNothingAndSaysWhy() async throws {
        let harness = try await ServerHarness(webhookAllowedDestinations: ["127.0.0.1"])
        defer { Task { await harness.stop() } }
        let app = try await createApp(harness, AppSecrets())
        let signer = AppStoreSigner(ca: harness.ca)
        let id = uniqueDigits()
        let t0 = TestSigning.signedDate
        let purchase = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/keyless/transactions", key: app.publicKey,
            json: [
                "signedTransaction": try signer.transaction(
                    id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0)
            ])
        #expect(purchase.status == 200, "\(purchase.text)")
        let transport = ScriptedTransport()
        let keyless = WebhookDeliverer(
            store: harness.store, transport: transport, clock: ServerClock(now: harness.clock.function),
            metrics: ServerMetrics(), settings: WebhookDeliverer.Settings(random: { 0.5 }), secrets: .keyless)
        #expect(await keyless.deliverDue() == 1)
        #expect(transport.sent.withLock { $0.count } == 0)
        let failed = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/webhooks/deliveries/failed", key: app.secretKey)
        let deliveries = failed.json["deliveries"] as? [[String: Any]] ?? []
        #expect(deliveries.count == 1)
        #expect(
            deliveries.first?["lastError"] as? String == "signing_secret_unavailable")
        #expect(deliveries.first?["deadLetteredAt"] == nil)
    }

    @Test func serverWithoutAKeyRefusesToStoreSecrets() async throws {
        let harness = try await ServerHarness(secrets: .keyless, webhookAllowedDestinations: ["127.0.0.1"])
        defer { Task { await harness.stop() } }
        let appId = "app-\(uniqueDigits())"
        let refused = try await harness.request(
            "POST", "/v1/admin/apps", key: ServerHarness.adminKey,
            json: ["id": appId, "bundleId": "com.example", "environments": ["Sandbox"], "sharedSecret": "s3cr3t"])
        #expect(refused.status == 409)
        #expect(refused.errorCode == "secrets_key_missing")
        #expect(try await harness.store.read { try $0.app(id: appId) } == nil)
        let created = try await harness.request(
            "POST", "/v1/admin/apps", key: ServerHarness.adminKey,
            json: ["id": appId, "bundleId": "com.example", "environments": ["Sandbox"]])
        #expect(created.status == 201)
        let key = try await harness.request(
            "POST", "/v1/admin/apps/\(appId)/keys", key: ServerHarness.adminKey, json: ["kind": "secret"])
        let hook = try await harness.request(
            "POST", "/v1/apps/\(appId)/webhooks", key: try #require(key.json["key"] as? String),
            json: ["url": "http://127.0.0.1:9/hooks"])
        #expect(hook.status == 409)
        #expect(hook.errorCode == "secrets_key_missing")
        #expect(try await harness.store.read { try $0.webhookEndpoints(appId: appId) } == [])
    }

    @Test func oversizedSharedSecretIsRefused() async throws {
        let harness = try await ServerHarness(webhookAllowedDestinations: ["127.0.0.1"])
        defer { Task { await harness.stop() } }
        let response = try await harness.request(
            "POST", "/v1/admin/apps", key: ServerHarness.adminKey,
            json: [
                "id": "app-\(uniqueDigits())", "bundleId": "com.example", "environments": ["Sandbox"],
                "sharedSecret": String(repeating: "s", count: 1025),
            ])
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_body")
    }

    func v1Body(password: String, transactionId: String) -> [String: Any] {
        let t0 = TestSigning.signedDate
        return [
            "notification_type": "INITIAL_BUY", "password": password, "environment": "Sandbox",
            "bid": "com.example", "auto_renew_product_id": "com.example.monthly",
            "unified_receipt": [
                "environment": "Sandbox", "status": 0,
                "latest_receipt_info": [
                    [
                        "product_id": "com.example.monthly", "transaction_id": transactionId,
                        "original_transaction_id": transactionId,
                        "purchase_date_ms": "\(t0.millisecondsSince1970)",
                        "expires_date_ms": "\(t0.plus(days: 30).millisecondsSince1970)", "quantity": "1",
                    ]
                ],
            ],
        ]
    }
}

/// What the secrets tests read beneath the store's API.
extension OwnDatabase {
    /// The stored secret columns of one app, read with SQL (not through the store's API).
    func rawSecrets(appId: String) async throws -> [String] {
        let store = try await open()
        defer { Task { await store.close() } }
        return try await store.read { reader in
            let connection = (reader as! SQLStoreTransaction).connection
            let shared = try connection.query("SELECT shared_secret FROM apps WHERE id = $1", [.text(appId)])
            let settings = try connection.query("SELECT settings_json FROM apps WHERE id = $1", [.text(appId)])
            let hooks = try connection.query("SELECT secret FROM webhook_endpoints WHERE app_id = $1", [.text(appId)])
            var values = try shared.compactMap { try $0.optionalText(0) } + hooks.map { try $0.text(0) }
            for row in settings {
                let json = try AppStoreJSON.decode(JSONValue.self, from: Data(try row.text(0).utf8))
                if case .object(let object) = json, case .object(let connect)? = object["appStoreConnect"],
                    case .string(let pem)? = connect["privateKeyPEM"]
                {
                    values.append(pem)
                }
            }
            return values
        }
    }

    /// Everything the database holds as text: the SQLite file and its WAL byte for byte, or
    /// every row of every PostgreSQL table.
    func rawContents() async throws -> String {
        switch engine {
        case .sqlite:
            var bytes = Data()
            for suffix in ["", "-wal"] {
                if let data = FileManager.default.contents(atPath: url + suffix) { bytes.append(data) }
            }
            return String(decoding: bytes, as: UTF8.self)
        case .postgres:
            let tables = try Self.query(
                url, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            ).map { try $0.text(0) }
            var text = ""
            for table in tables {
                // Table names come from the catalog, quoted as identifiers.
                for row in try Self.query(url, "SELECT t::text FROM \"\(table)\" t") { text += try row.text(0) + "\n" }
            }
            return text
        }
    }
}
