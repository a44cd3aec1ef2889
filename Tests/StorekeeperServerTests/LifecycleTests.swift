import AppStoreModels
import AppStoreTrust
import Foundation
import HTTPServer
import StorekeeperServer
import StorekeeperTesting
import Testing

/// A whole subscription lifecycle over HTTP: SUBSCRIBED → DID_RENEW → DID_FAIL_TO_RENEW (grace)
/// → DID_RENEW (recovery) → REFUND → REFUND_REVERSED → EXPIRED, ending in the right CustomerInfo
/// and the right signed webhooks at a real listener.
@Suite(.serialized) struct LifecycleTests {
    @Test func lifecycleOnSQLite() async throws {
        try await runLifecycle(on: .sqlite)
    }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func lifecycleOnPostgreSQL() async throws {
        try await runLifecycle(on: .postgres(TestDatabase.postgresURL!))
    }

    func runLifecycle(on database: TestDatabase) async throws {
        // The receiver listens on loopback, which the destination policy refuses by default.
        let harness = try await ServerHarness(database: database, webhookAllowedDestinations: ["127.0.0.1"])
        let receiver = try WebhookReceiver()
        defer { _ = receiver }
        do {
            try await scenario(harness, receiver)
        } catch {
            await receiver.stop()
            await harness.stop()
            throw error
        }
        await receiver.stop()
        await harness.stop()
    }

    func scenario(_ harness: ServerHarness, _ receiver: WebhookReceiver) async throws {
        let app = try await harness.createApp()
        let hook = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": receiver.url])
        #expect(hook.status == 201)
        let secret = try #require(hook.json["secret"] as? String)

        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let original = uniqueDigits()
        let second = uniqueDigits()
        let third = uniqueDigits()
        let notifications = "/v1/apps/\(app.appId)/notifications/appstore"
        func post(_ signedPayload: String) async throws -> TestResponse {
            try await harness.request("POST", notifications, json: ["signedPayload": signedPayload])
        }
        func customer() async throws -> [String: Any] {
            let response = try await harness.request(
                "GET", "/v1/apps/\(app.appId)/customers/alice", key: app.publicKey)
            #expect(response.status == 200)
            return response.json
        }
        func pro(_ info: [String: Any]) -> [String: Any]? {
            (info["entitlements"] as? [String: Any])?["pro"] as? [String: Any]
        }

        // SUBSCRIBED arrives before the app posts the purchase: stored, unclaimed.
        let firstTransaction = try signer.transaction(
            id: original, originalId: original, purchase: t0, expires: t0.plus(days: 30), signed: t0)
        harness.clock.set(t0.plus(days: 0.01))
        let subscribed = try await post(
            try signer.notification(
                .subscribed, .initialBuy, transaction: firstTransaction,
                renewal: try signer.renewal(originalId: original, signed: t0), signed: t0))
        #expect(subscribed.status == 200)
        #expect(subscribed.json["outcome"] as? String == "unclaimed")

        // The app posts it for alice: claimed, INITIAL_PURCHASE, entitlement active.
        let posted = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/alice/transactions", key: app.publicKey,
            json: ["signedTransaction": firstTransaction])
        #expect(posted.status == 200, "\(posted.text)")
        #expect(pro(posted.json)?["isActive"] as? Bool == true)

        // DID_RENEW.
        let renewed = try signer.transaction(
            id: second, originalId: original, purchase: t0.plus(days: 30), expires: t0.plus(days: 60),
            signed: t0.plus(days: 30), reason: .renewal)
        harness.clock.set(t0.plus(days: 30.01))
        #expect(
            try await post(
                try signer.notification(
                    .didRenew, transaction: renewed,
                    renewal: try signer.renewal(originalId: original, signed: t0.plus(days: 30)),
                    signed: t0.plus(days: 30))
            ).json["outcome"] as? String == "applied")
        #expect(pro(try await customer())?["expiresDate"] as? Int64 == t0.plus(days: 60).millisecondsSince1970)

        // DID_FAIL_TO_RENEW with a grace period: still active until the grace period ends.
        harness.clock.set(t0.plus(days: 60.01))
        let graceEnd = t0.plus(days: 76)
        #expect(
            try await post(
                try signer.notification(
                    .didFailToRenew, .gracePeriod, transaction: renewed,
                    renewal: try signer.renewal(
                        originalId: original, signed: t0.plus(days: 60), billingRetry: true, grace: graceEnd,
                        expirationIntent: .billingError), signed: t0.plus(days: 60))
            ).status == 200)
        let inGrace = try await customer()
        #expect(pro(inGrace)?["isActive"] as? Bool == true)
        #expect(pro(inGrace)?["gracePeriodExpiresDate"] as? Int64 == graceEnd.millisecondsSince1970)

        // DID_RENEW (billing recovery).
        let recovered = try signer.transaction(
            id: third, originalId: original, purchase: t0.plus(days: 61), expires: t0.plus(days: 91),
            signed: t0.plus(days: 61), reason: .renewal)
        harness.clock.set(t0.plus(days: 61.01))
        #expect(
            try await post(
                try signer.notification(
                    .didRenew, .billingRecovery, transaction: recovered,
                    renewal: try signer.renewal(originalId: original, signed: t0.plus(days: 61)),
                    signed: t0.plus(days: 61))
            ).status == 200)
        #expect(pro(try await customer())?["isActive"] as? Bool == true)

        // REFUND of the recovered period: access ends.
        harness.clock.set(t0.plus(days: 70.01))
        let refunded = try signer.transaction(
            id: third, originalId: original, purchase: t0.plus(days: 61), expires: t0.plus(days: 91),
            signed: t0.plus(days: 70), revocation: t0.plus(days: 70), reason: .renewal)
        #expect(
            try await post(try signer.notification(.refund, transaction: refunded, signed: t0.plus(days: 70))).status
                == 200)
        #expect(pro(try await customer())?["isActive"] as? Bool == false)

        // REFUND_REVERSED: access again.
        harness.clock.set(t0.plus(days: 75.01))
        let reinstated = try signer.transaction(
            id: third, originalId: original, purchase: t0.plus(days: 61), expires: t0.plus(days: 91),
            signed: t0.plus(days: 75), reason: .renewal)
        #expect(
            try await post(try signer.notification(.refundReversed, transaction: reinstated, signed: t0.plus(days: 75)))
                .status == 200)
        #expect(pro(try await customer())?["isActive"] as? Bool == true)

        // Auto-renew off, then EXPIRED (voluntary).
        harness.clock.set(t0.plus(days: 91.01))
        #expect(
            try await post(
                try signer.notification(
                    .expired, .voluntary, transaction: reinstated,
                    renewal: try signer.renewal(
                        originalId: original, signed: t0.plus(days: 91), autoRenew: false,
                        expirationIntent: .customerCancelled), signed: t0.plus(days: 91))
            ).status == 200)
        let final = try await customer()
        #expect(pro(final)?["isActive"] as? Bool == false)
        #expect(pro(final)?["expiresDate"] as? Int64 == t0.plus(days: 91).millisecondsSince1970)

        // The events the API lists are the ones the webhooks carry, in order.
        let eventsResponse = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/customers/alice/events", key: app.secretKey)
        #expect(eventsResponse.status == 200)
        let events = (eventsResponse.json["events"] as? [[String: Any]] ?? []).compactMap {
            ($0["event"] as? [String: Any])?["type"] as? String
        }
        for expected in [
            "INITIAL_PURCHASE", "RENEWAL", "BILLING_ISSUE", "BILLING_RECOVERED", "REFUND", "REFUND_REVERSED",
            "EXPIRATION",
        ] {
            #expect(events.contains(expected), "missing \(expected) in \(events)")
        }

        // Deliver the outbox to the real listener and check every signature.
        for _ in 0..<20 where await harness.application.webhookDeliverer.deliverDue() > 0 {}
        let deliveries = receiver.deliveries
        #expect(deliveries.count == events.count, "\(deliveries.count) deliveries for \(events.count) events")
        let now = harness.clock.now.secondsSince1970
        for delivery in deliveries {
            let header = try #require(delivery.headers[WebhookSignature.headerName])
            #expect(WebhookSignature.isValid(header: header, body: delivery.body, secret: secret, nowUnixSeconds: now))
            #expect(
                !WebhookSignature.isValid(
                    header: header, body: delivery.body, secret: "wrong-secret-0000", nowUnixSeconds: now))
            #expect(delivery.json["appId"] as? String == app.appId)
            #expect((delivery.json["customer"] as? [String: Any])?["appUserId"] as? String == "alice")
            #expect(delivery.json["customerInfo"] is [String: Any])
        }
        #expect(deliveries.compactMap { $0.json["type"] as? String } == events)
        // Redelivery never happens for delivered rows.
        #expect(await harness.application.webhookDeliverer.deliverDue() == 0)
    }
}
