import AppStoreModels
import AppStoreTrust
import Foundation
import HTTPServer
import Storage
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Issue 16 over HTTP, on both engines: the access scheduler commits the end of access at the
/// instant it happens (grace end, expiry), with its webhook, and the notification that arrives
/// afterwards for the same change adds no second event.
@Suite(.serialized) struct AccessSchedulerTests {
    @Test func graceEndOnSQLite() async throws {
        try await run(on: .sqlite, graceEnd)
    }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func graceEndOnPostgreSQL() async throws {
        try await run(on: .postgres(TestDatabase.postgresURL!), graceEnd)
    }

    @Test func timeDrivenExpiryOnSQLite() async throws {
        try await run(on: .sqlite, timeDrivenExpiry)
    }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func timeDrivenExpiryOnPostgreSQL() async throws {
        try await run(on: .postgres(TestDatabase.postgresURL!), timeDrivenExpiry)
    }

    private func run(
        on database: TestDatabase, _ scenario: (ServerHarness, WebhookReceiver) async throws -> Void
    ) async throws {
        // A database of its own: the scheduler claims every due state in it, and on the shared
        // PostgreSQL database other suites leave states whose instants have passed.
        let engine: StoreEngine = if case .postgres = database { .postgres } else { .sqlite }
        let own = try await OwnDatabase.make(engine)
        let harness = try await ServerHarness(
            opened: (try await own.open(), { own.drop() }), webhookAllowedDestinations: ["127.0.0.1"])
        let receiver = try WebhookReceiver()
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

    /// One customer, alice, subscribed at `t0` for 30 days, with a webhook endpoint.
    private struct Fixture {
        let harness: ServerHarness
        let app: ServerHarness.AppKeys
        let signer: AppStoreSigner
        let original: String
        let firstTransaction: String
        let t0: Timestamp

        init(_ harness: ServerHarness, _ receiver: WebhookReceiver) async throws {
            self.harness = harness
            app = try await harness.createApp()
            let hook = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": receiver.url])
            #expect(hook.status == 201)
            signer = AppStoreSigner(ca: harness.ca)
            t0 = TestSigning.signedDate
            original = uniqueDigits()
            firstTransaction = try signer.transaction(
                id: original, originalId: original, purchase: t0, expires: t0.plus(days: 30), signed: t0)
            harness.clock.set(t0.plus(days: 0.01))
            let posted = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/customers/alice/transactions", key: app.publicKey,
                json: ["signedTransaction": firstTransaction])
            #expect(posted.status == 200, "\(posted.text)")
        }

        func post(_ signedPayload: String) async throws -> TestResponse {
            try await harness.request(
                "POST", "/v1/apps/\(app.appId)/notifications/appstore", json: ["signedPayload": signedPayload])
        }

        /// The stored events as `TYPE@milliseconds REASON`.
        func events() async throws -> [String] {
            let response = try await harness.request(
                "GET", "/v1/apps/\(app.appId)/customers/alice/events", key: app.secretKey)
            #expect(response.status == 200)
            return (response.json["events"] as? [[String: Any]] ?? []).compactMap {
                guard let event = $0["event"] as? [String: Any], let type = event["type"] as? String else { return nil }
                var line = "\(type)@\(event["occurredAt"] as? Int64 ?? -1)"
                if let reason = event["expirationReason"] as? String { line += " \(reason)" }
                return line
            }
        }

        func subscription() async throws -> [String: Any]? {
            let response = try await harness.request(
                "GET", "/v1/apps/\(app.appId)/customers/alice", key: app.publicKey)
            return (response.json["subscriptions"] as? [String: Any])?["com.example.monthly"] as? [String: Any]
        }
    }

    /// The issue's reproduction: DID_FAIL_TO_RENEW/GRACE_PERIOD with billing retry, a grace date
    /// a few seconds ahead and intent 2. The scheduler's pass just before the grace date does
    /// nothing; the one after it commits EXPIRATION (BILLING_ERROR) dated at the grace date, the
    /// customer still in billing retry; GRACE_PERIOD_EXPIRED then answers `applied` and adds no
    /// event; the webhook carries the expiration once.
    func graceEnd(_ harness: ServerHarness, _ receiver: WebhookReceiver) async throws {
        let f = try await Fixture(harness, receiver)
        let expiry = f.t0.plus(days: 30)
        let grace = expiry.adding(milliseconds: 5_000)
        harness.clock.set(expiry.adding(milliseconds: 100))
        let failed = try await f.post(
            try f.signer.notification(
                .didFailToRenew, .gracePeriod,
                transaction: f.firstTransaction,
                renewal: try f.signer.renewal(
                    originalId: f.original, signed: expiry, billingRetry: true, grace: grace,
                    expirationIntent: .billingError), signed: expiry))
        #expect(failed.status == 200)
        let base = [
            "INITIAL_PURCHASE@\(f.t0.millisecondsSince1970)", "BILLING_ISSUE@\(expiry.millisecondsSince1970)",
            "GRACE_PERIOD_STARTED@\(expiry.millisecondsSince1970)",
        ]
        #expect(try await f.events() == base)

        harness.clock.set(grace.adding(milliseconds: -1))
        #expect(await harness.application.accessScheduler.commitDue() == 0)
        #expect(try await f.events() == base)

        // Within the scheduler's resolution (its default poll interval) of the grace date.
        harness.clock.set(grace.adding(milliseconds: 2_000))
        #expect(await harness.application.accessScheduler.commitDue() == 1)
        let ended = base + ["EXPIRATION@\(grace.millisecondsSince1970) BILLING_ERROR"]
        #expect(try await f.events() == ended)
        #expect(try await f.subscription()?["status"] as? String == "IN_BILLING_RETRY")
        #expect(await harness.application.accessScheduler.commitDue() == 0)

        harness.clock.set(grace.adding(milliseconds: 30_000))
        let notice = try await f.post(
            try f.signer.notification(
                .gracePeriodExpired, transaction: f.firstTransaction,
                renewal: try f.signer.renewal(
                    originalId: f.original, signed: grace.adding(milliseconds: 20_000), billingRetry: true,
                    grace: grace, expirationIntent: .billingError), signed: grace.adding(milliseconds: 20_000)))
        #expect(notice.status == 200)
        #expect(notice.json["outcome"] as? String == "applied")
        #expect(try await f.events() == ended)

        for _ in 0..<20 where await harness.application.webhookDeliverer.deliverDue() > 0 {}
        let types = receiver.deliveries.compactMap { $0.json["type"] as? String }
        #expect(types == ["INITIAL_PURCHASE", "BILLING_ISSUE", "GRACE_PERIOD_STARTED", "EXPIRATION"])
    }

    /// Auto-renew off and the EXPIRED notification lost: the scheduler ends access at
    /// `expiresDate`; EXPIRED/VOLUNTARY arriving afterwards gives no second expiry, and the
    /// reason is the voluntary one.
    func timeDrivenExpiry(_ harness: ServerHarness, _ receiver: WebhookReceiver) async throws {
        let f = try await Fixture(harness, receiver)
        let expiry = f.t0.plus(days: 30)
        let off = f.t0.plus(days: 10)
        harness.clock.set(off)
        let disabled = try await f.post(
            try f.signer.notification(
                .didChangeRenewalStatus, .autoRenewDisabled, transaction: f.firstTransaction,
                renewal: try f.signer.renewal(originalId: f.original, signed: off, autoRenew: false), signed: off))
        #expect(disabled.status == 200)
        #expect(await harness.application.accessScheduler.commitDue() == 0)

        harness.clock.set(expiry.adding(milliseconds: 1_000))
        #expect(await harness.application.accessScheduler.commitDue() == 1)
        let expected = [
            "INITIAL_PURCHASE@\(f.t0.millisecondsSince1970)", "CANCELLATION@\(off.millisecondsSince1970)",
            "EXPIRATION@\(expiry.millisecondsSince1970) CUSTOMER_CANCELLED",
        ]
        #expect(try await f.events() == expected)
        #expect(try await f.subscription()?["isActive"] as? Bool == false)

        let late = expiry.adding(milliseconds: 3_600_000)
        harness.clock.set(late)
        let expired = try await f.post(
            try f.signer.notification(
                .expired, .voluntary, transaction: f.firstTransaction,
                renewal: try f.signer.renewal(
                    originalId: f.original, signed: late, autoRenew: false, expirationIntent: .customerCancelled),
                signed: late))
        #expect(expired.status == 200)
        #expect(try await f.events() == expected)
        for _ in 0..<20 where await harness.application.webhookDeliverer.deliverDue() > 0 {}
        #expect(
            receiver.deliveries.compactMap { $0.json["type"] as? String } == [
                "INITIAL_PURCHASE", "CANCELLATION", "EXPIRATION",
            ])
    }
}
