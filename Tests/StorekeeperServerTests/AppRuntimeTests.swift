import AppStoreModels
import AppStoreTrust
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// The per-app runtime cache: changes through the admin API take effect at once on this
/// instance and within `appRefreshMilliseconds` on another instance sharing the database;
/// stored settings that cannot be read are an error, never the defaults.
@Suite(.serialized)
struct AppRuntimeTests {
    @Test(
        "an admin change reaches a second instance on the same PostgreSQL within the refresh bound",
        .enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func adminChangeReachesAnotherInstance() async throws {
        let url = TestDatabase.postgresURL!
        let first = try await ServerHarness(database: .postgres(url))
        let otherCA = try TestSigning.authority(name: "Other Test Root")
        // Instances sharing a database share its secrets key.
        let second = try await ServerHarness(database: .postgres(url), ca: otherCA, secrets: first.secrets)
        let app = try await first.createApp()
        let path = "/v1/apps/\(app.appId)/notifications/appstore"
        // Signed under the second instance's CA, which the app does not trust yet.
        let signer = AppStoreSigner(ca: otherCA)
        func post() async throws -> TestResponse {
            let payload = try signer.notification(.test, signed: TestSigning.signedDate)
            return try await second.request("POST", path, json: ["signedPayload": payload])
        }
        let refused = try await post()
        #expect(refused.status == 400)
        #expect(refused.errorCode == "verification_failed")
        let changed = try await first.request(
            "PUT", "/v1/admin/apps/\(app.appId)", key: ServerHarness.adminKey,
            json: ["rootCertificatesPEM": [otherCA.root.pem]])
        #expect(changed.status == 200)
        let started = ContinuousClock.now
        var accepted: TestResponse?
        while ContinuousClock.now - started < .seconds(5) {
            let answer = try await post()
            if answer.status == 200 {
                accepted = answer
                break
            }
            #expect(answer.errorCode == "verification_failed")
            try await Task.sleep(for: .milliseconds(50))
        }
        let elapsed = ContinuousClock.now - started
        #expect(accepted?.json["outcome"] as? String == "recorded")
        // The default bound is 1 s; allow the poll step and a loaded machine.
        #expect(elapsed < .milliseconds(2500), "the second instance took \(elapsed) to see the new roots")
        await second.stop()
        await first.stop()
    }

    @Test("a change through this instance applies to the very next request")
    func localChangeIsImmediate() async throws {
        let harness = try await ServerHarness()
        let app = try await harness.createApp()
        let customer = "/v1/apps/\(app.appId)/customers/u1"
        #expect(
            try await harness.request("GET", customer, key: app.publicKey).json["environment"] as? String == "Sandbox")
        let changed = try await harness.request(
            "PUT", "/v1/admin/apps/\(app.appId)", key: ServerHarness.adminKey,
            json: ["environments": ["Production", "Sandbox"], "appAppleId": 1_234_567_890])
        #expect(changed.status == 200)
        #expect(
            try await harness.request("GET", customer, key: app.publicKey).json["environment"] as? String
                == "Production")
        await harness.stop()
    }

    @Test("stored settings that cannot be read refuse ingestion instead of running on defaults")
    func unreadableSettingsAreAnError() async throws {
        let harness = try await ServerHarness()
        let app = try await harness.createApp()
        let appId = app.appId
        let now = TestSigning.signedDate
        try await harness.store.write { transaction in
            var record = try transaction.app(id: appId)!
            record.settings = .object(["transferPolicy": .string("to_whoever_asks")])
            try transaction.saveApp(record, at: now)
        }
        let payload = try AppStoreSigner(ca: harness.ca).notification(.test, signed: now)
        let path = "/v1/apps/\(appId)/notifications/appstore"
        // Within the refresh bound the old runtime may still answer; after it, the stored row wins.
        try await Task.sleep(for: .milliseconds(1100))
        let refused = try await harness.request("POST", path, json: ["signedPayload": payload])
        #expect(refused.status == 409)
        #expect(refused.errorCode == "app_not_configured")
        #expect(
            refused.json["error"].flatMap { ($0 as? [String: Any])?["message"] as? String }
                == "The app's stored settings cannot be read.")
        let view = try await harness.request("GET", "/v1/admin/apps/\(appId)", key: ServerHarness.adminKey)
        #expect(view.status == 409)
        #expect(view.errorCode == "app_not_configured")
        await harness.stop()
    }
}

/// The reads that wait on nothing but the local store are answered on the HTTP thread.
@Suite(.serialized)
struct ImmediateRouteTests {
    static func onThread<R: Sendable>(_ body: @escaping @Sendable () -> R) async -> R {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test("health and CustomerInfo are answered without a hop; posting defers to the task pool")
    func immediateRoutes() async throws {
        let harness = try await ServerHarness()
        let app = try await harness.createApp()
        let responder = harness.application.responder
        #expect(responder.answersImmediately)
        let health = await Self.onThread {
            responder.respondImmediately(to: HTTPRequest(method: .get, path: "/healthz"))
        }
        #expect(health?.status.code == 200)
        #expect(health.map { String(decoding: $0.body, as: UTF8.self) } == #"{"status":"ok"}"#)
        let path = "/v1/apps/\(app.appId)/customers/u1"
        let headers: HTTPHeaders = ["Authorization": "Bearer \(app.publicKey)"]
        let immediate = await Self.onThread {
            responder.respondImmediately(to: HTTPRequest(method: .get, path: path, headers: headers))
        }
        let viaPool = try await harness.request("GET", path, key: app.publicKey)
        #expect(immediate?.status.code == 200)
        #expect(immediate?.body == viaPool.body)
        #expect(immediate?.headers["ETag"] == viaPool.header("ETag"))
        let unauthorized = await Self.onThread {
            responder.respondImmediately(to: HTTPRequest(method: .get, path: path))
        }
        #expect(unauthorized?.status.code == 401)
        let post = await Self.onThread {
            responder.respondImmediately(
                to: HTTPRequest(method: .post, path: "/v1/apps/\(app.appId)/notifications/appstore"))
        }
        #expect(post == nil)
        await harness.stop()
    }
}
