import AppStoreModels
import AppStoreTrust
import Foundation
import Storage
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Notification ingestion over HTTP: duplicates, refusals (recorded), TEST, V1 bodies,
/// CONSUMPTION_REQUEST jobs.
@Suite(.serialized) struct NotificationTests {
    @Test func duplicatesAreAcknowledgedOnce() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let signer = AppStoreSigner(ca: harness.ca)
        let id = uniqueDigits()
        let t0 = TestSigning.signedDate
        let payload = try signer.notification(
            .subscribed, .initialBuy,
            transaction: try signer.transaction(
                id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0),
            signed: t0)
        let path = "/v1/apps/\(app.appId)/notifications/appstore"
        let first = try await harness.request("POST", path, json: ["signedPayload": payload])
        let second = try await harness.request("POST", path, json: ["signedPayload": payload])
        #expect(first.status == 200)
        #expect(first.json["outcome"] as? String == "unclaimed")
        #expect(second.status == 200)
        #expect(second.json["outcome"] as? String == "duplicate")
        let count = try await harness.store.read { try $0.notificationCount(appId: app.appId) }
        #expect(count == 1)
    }

    @Test func refusedSignaturesAre400AndRecorded() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let stranger = try TestSigning.authority(name: "Someone Else")
        let id = uniqueDigits()
        let t0 = TestSigning.signedDate
        let foreign = AppStoreSigner(ca: stranger)
        let forged = try foreign.notification(
            .subscribed,
            transaction: try foreign.transaction(
                id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0),
            signed: t0)
        let path = "/v1/apps/\(app.appId)/notifications/appstore"
        let untrusted = try await harness.request("POST", path, json: ["signedPayload": forged])
        #expect(untrusted.status == 400)
        #expect(untrusted.errorCode == "verification_failed")
        let garbage = try await harness.request("POST", path, json: ["signedPayload": "not.a.jws"])
        #expect(garbage.status == 400)
        let otherBundle = try AppStoreSigner(ca: harness.ca, bundleId: "com.other").notification(.test, signed: t0)
        let mismatch = try await harness.request("POST", path, json: ["signedPayload": otherBundle])
        #expect(mismatch.status == 400)
        #expect(mismatch.text.contains("app.bundleIdMismatch"))

        let audit = try await harness.store.read { try $0.auditEntries(after: nil, limit: 100) }
        let rejected = audit.filter { $0.action == "notification.rejected" && $0.appId == app.appId }
        #expect(rejected.count == 3)
        #expect(!audit.contains { "\($0.detail)".contains(forged) })
        let metrics = try await harness.request("GET", "/metrics")
        #expect(metrics.text.contains("storekeeper_verification_failures_total{rule=\"chain.untrustedRoot\"}"))
        #expect(metrics.text.contains("outcome=\"rejected\""))
    }

    @Test func testNotificationIsRecorded() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let uuid = UUID().uuidString.lowercased()
        let payload = try AppStoreSigner(ca: harness.ca).notification(.test, signed: TestSigning.signedDate, uuid: uuid)
        let response = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/notifications/appstore", json: ["signedPayload": payload])
        #expect(response.status == 200)
        #expect(response.json["outcome"] as? String == "recorded")
        let stored = try await harness.store.read { try $0.notification(appId: app.appId, uuid: uuid) }
        #expect(stored?.type == "TEST")
        #expect(stored?.outcome == "recorded")
        #expect(stored?.signedPayload == payload)
    }

    @Test func consumptionRequestQueuesAJobWhenEnabled() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp(settings: ["answerConsumptionRequests": true])
        let signer = AppStoreSigner(ca: harness.ca)
        let id = uniqueDigits()
        let t0 = TestSigning.signedDate
        let payload = try signer.notification(
            .consumptionRequest,
            transaction: try signer.transaction(
                id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0),
            signed: t0.plus(days: 1))
        let response = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/notifications/appstore", json: ["signedPayload": payload])
        #expect(response.status == 200)
        let jobs = try await harness.store.write { transaction in
            try transaction.claimJobs(
                kind: "consumption_request", owner: "test", now: TestSigning.signedDate.plus(days: 2),
                leaseMilliseconds: 1000, limit: 10)
        }
        #expect(jobs.count == 1)
        #expect(jobs.first?.payload.contains(id) == true)
    }

    @Test func v1BodiesNeedTheSharedSecret() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let id = uniqueDigits()
        let t0 = TestSigning.signedDate
        func body(password: String) -> [String: Any] {
            [
                "notification_type": "INITIAL_BUY", "password": password, "environment": "Sandbox",
                "bid": "com.example", "auto_renew_product_id": "com.example.monthly",
                "unified_receipt": [
                    "environment": "Sandbox", "status": 0,
                    "latest_receipt_info": [
                        [
                            "product_id": "com.example.monthly", "transaction_id": id, "original_transaction_id": id,
                            "purchase_date_ms": "\(t0.millisecondsSince1970)",
                            "expires_date_ms": "\(t0.plus(days: 30).millisecondsSince1970)", "quantity": "1",
                        ]
                    ],
                ],
            ]
        }
        let path = "/v1/apps/\(app.appId)/notifications/appstore"
        let wrong = try await harness.request("POST", path, json: body(password: "not-the-secret"))
        #expect(wrong.status == 401)
        #expect(wrong.errorCode == "shared_secret_mismatch")
        let right = try await harness.request("POST", path, json: body(password: "shared-secret-\(app.appId)"))
        #expect(right.status == 200, "\(right.text)")
        #expect(right.json["outcome"] as? String == "unclaimed")
        // The stored body never keeps the shared secret.
        let notificationId = try #require(right.json["notificationId"] as? String)
        let stored = try await harness.store.read { try $0.notification(appId: app.appId, uuid: notificationId) }
        #expect(stored?.signedPayload.contains("shared-secret") == false)
        let again = try await harness.request("POST", path, json: body(password: "shared-secret-\(app.appId)"))
        #expect(again.json["outcome"] as? String == "duplicate")
    }

    /// Issue 11, defect 9(c): a V1 auto-renew change is dated by Apple's
    /// `auto_renew_status_change_date_ms`, not by when the notification arrived.
    @Test func v1AutoRenewChangeTakesApplesChangeDate() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let signer = AppStoreSigner(ca: harness.ca)
        let id = uniqueDigits()
        let t0 = TestSigning.signedDate
        harness.clock.set(t0.plus(days: 1))
        let posted = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/vic/transactions", key: app.publicKey,
            json: [
                "signedTransaction": try signer.transaction(
                    id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0)
            ])
        #expect(posted.status == 200)
        let changed = t0.plus(days: 2)
        // Delivered three days after the change (Apple retries failed V1 deliveries).
        harness.clock.set(t0.plus(days: 5))
        let body: [String: Any] = [
            "notification_type": "DID_CHANGE_RENEWAL_STATUS", "password": "shared-secret-\(app.appId)",
            "environment": "Sandbox", "bid": "com.example", "auto_renew_status": "false",
            "auto_renew_product_id": "com.example.monthly", "original_transaction_id": id,
            "auto_renew_status_change_date_ms": "\(changed.millisecondsSince1970)",
            "unified_receipt": [
                "environment": "Sandbox", "status": 0,
                "latest_receipt_info": [
                    [
                        "product_id": "com.example.monthly", "transaction_id": id, "original_transaction_id": id,
                        "purchase_date_ms": "\(t0.millisecondsSince1970)",
                        "expires_date_ms": "\(t0.plus(days: 30).millisecondsSince1970)", "quantity": "1",
                    ]
                ],
                "pending_renewal_info": [
                    [
                        "product_id": "com.example.monthly", "auto_renew_product_id": "com.example.monthly",
                        "original_transaction_id": id, "auto_renew_status": "0",
                    ]
                ],
            ],
        ]
        let response = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/notifications/appstore", json: body)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["outcome"] as? String == "applied")
        let customer = try await harness.request("GET", "/v1/apps/\(app.appId)/customers/vic", key: app.publicKey)
        let pro = (customer.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any]
        #expect(pro?["willRenew"] as? Bool == false)
        #expect(pro?["unsubscribeDetectedAt"] as? Int64 == changed.millisecondsSince1970)
        let events = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/customers/vic/events", key: app.secretKey)
        let cancellations = (events.json["events"] as? [[String: Any]] ?? []).compactMap {
            $0["event"] as? [String: Any]
        }.filter { $0["type"] as? String == "CANCELLATION" }
        #expect(cancellations.count == 1)
        #expect(cancellations.first?["occurredAt"] as? Int64 == changed.millisecondsSince1970)
    }

    /// Issue 11, defect 9(d): a renewal info posted where a notification belongs is refused for
    /// its type, not for the bundle id it does not carry.
    @Test func renewalInfoPostedAsANotificationIsRefusedForItsType() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let renewal = try AppStoreSigner(ca: harness.ca).renewal(
            originalId: uniqueDigits(), signed: TestSigning.signedDate)
        let response = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/notifications/appstore", json: ["signedPayload": renewal])
        #expect(response.status == 400)
        #expect(response.errorCode == "verification_failed")
        #expect(
            (response.json["error"] as? [String: Any])?["message"] as? String
                == "The signed payload failed verification (format.payloadType).")
        let audit = try await harness.store.read { try $0.auditEntries(after: nil, limit: 100) }
        let rejected = audit.filter { $0.action == "notification.rejected" && $0.appId == app.appId }
        #expect(rejected.count == 1)
        if case .object(let detail)? = rejected.first?.detail {
            #expect(detail["rule"] == .string("format.payloadType"))
        } else {
            Issue.record("the rejection has no detail")
        }
    }

    @Test func unrecognisedBodiesAre400() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let path = "/v1/apps/\(app.appId)/notifications/appstore"
        #expect(
            try await harness.request("POST", path, json: ["hello": "world"]).errorCode == "unrecognized_notification")
        #expect(try await harness.request("POST", path, json: [1, 2]).status == 400)
        let missing = try await harness.request("POST", "/v1/apps/no-such-app/notifications/appstore", json: ["a": 1])
        #expect(missing.status == 404)
    }
}
