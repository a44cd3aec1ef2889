import AppStoreClient
import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Issue 12, consumption answers: a `CONSUMPTION_REQUEST` is answered with Send Consumption
/// Information v2 from the app's policy and what the app reported, inside Apple's 12-hour
/// window, only for a customer who consented; otherwise nothing is sent and the reason is
/// recorded. Apple's refund decision that follows is linked to the answer and counted.
@Suite(.serialized) struct ConsumptionAnswerTests {
    static let t0 = TestSigning.signedDate
    /// When Apple asks: six days into a 30-day subscription.
    static let requestedAt = t0.plus(days: 6)

    struct Setup {
        let harness: ServerHarness
        let fake: FakeAppStore
        let app: ServerHarness.AppKeys
        let signer: AppStoreSigner

        init(policy: [String: Any]) async throws {
            let fake = FakeAppStore()
            harness = try await ServerHarness(connections: { _, _, _ in fake })
            self.fake = fake
            app = try await harness.createApp(settings: ["answerConsumptionRequests": true, "consumption": policy])
            signer = AppStoreSigner(ca: harness.ca)
        }

        /// A 30-day subscription bought at t0 and posted by `user`; its id.
        func purchase(by user: String) async throws -> String {
            let id = uniqueDigits()
            harness.clock.set(ConsumptionAnswerTests.t0.plus(days: 0.1))
            let signed = try signer.transaction(
                id: id, originalId: id, purchase: ConsumptionAnswerTests.t0,
                expires: ConsumptionAnswerTests.t0.plus(days: 30), signed: ConsumptionAnswerTests.t0)
            let posted = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/customers/\(user)/transactions", key: app.publicKey,
                json: ["signedTransaction": signed])
            #expect(posted.status == 200, "\(posted.text)")
            return id
        }

        func consent(_ user: String, _ consented: Bool) async throws {
            let answer = try await harness.request(
                "PUT", "/v1/apps/\(app.appId)/customers/\(user)/consumption-consent", key: app.publicKey,
                json: ["consented": consented])
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.json["consented"] as? Bool == consented)
        }

        /// Apple's notification of `type` about transaction `id`, signed at `signed`; its UUID.
        @discardableResult
        func notify(_ type: NotificationTypeV2, _ id: String, signed: Timestamp) async throws -> String {
            let uuid = UUID().uuidString.lowercased()
            let transaction = try signer.transaction(
                id: id, originalId: id, purchase: ConsumptionAnswerTests.t0,
                expires: ConsumptionAnswerTests.t0.plus(days: 30), signed: signed,
                revocation: type == .refund ? signed : nil)
            let payload = try signer.notification(type, transaction: transaction, signed: signed, uuid: uuid)
            let answer = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/notifications/appstore", json: ["signedPayload": payload])
            #expect(answer.status == 200, "\(answer.text)")
            return uuid
        }

        func answer(_ uuid: String) async throws -> ConsumptionAnswerRecord? {
            let appId = app.appId
            return try await harness.store.read { try $0.consumptionAnswer(appId: appId, notificationUUID: uuid) }
        }

        var sent: [String: ConsumptionRequest] { fake.answers.withLock { $0.consumption } }
    }

    @Test func consentingCustomerIsAnsweredWithThePolicysFieldsInsideTheWindow() async throws {
        let setup = try await Setup(policy: ["refundPreference": "DECLINE", "sampleContentProvided": true])
        defer { Task { await setup.harness.stop() } }
        let id = try await setup.purchase(by: "alice")
        // Consent given through an alias is the customer's (once it was kept under the alias
        // and never found: the answer was withheld as consentUnknown).
        let aliased = try await setup.harness.request(
            "POST", "/v1/apps/\(setup.app.appId)/customers/alice/aliases", key: setup.app.secretKey,
            json: ["alias": "alice-device"])
        #expect(aliased.status == 200, "\(aliased.text)")
        let consented = try await setup.harness.request(
            "PUT", "/v1/apps/\(setup.app.appId)/customers/alice-device/consumption-consent",
            key: setup.app.publicKey, json: ["consented": true])
        #expect(consented.status == 200, "\(consented.text)")
        #expect(consented.json["appUserId"] as? String == "alice")
        setup.harness.clock.set(Self.requestedAt.adding(milliseconds: 60_000))
        let uuid = try await setup.notify(.consumptionRequest, id, signed: Self.requestedAt)
        // The worker runs an hour later: still inside the 12-hour window.
        setup.harness.clock.set(Self.requestedAt.adding(milliseconds: 3_600_000))
        #expect(await setup.harness.application.jobWorker.runDue() == 1)

        // No usage reported: estimated from time used, 6 d 1 h of 30 d (145 h of 720 h), in
        // thousandths of a percent: 14_500_000 / 720 = 20_138.
        let expected = ConsumptionRequest(
            customerConsented: true, consumptionPercentage: 20_138, deliveryStatus: RawEnum(.delivered),
            refundPreference: RawEnum(.decline), sampleContentProvided: true)
        #expect(setup.sent == [id: expected])
        let answer = try #require(try await setup.answer(uuid))
        #expect(answer.outcome == "sent")
        #expect(answer.reason == nil)
        #expect(answer.transactionId == id)
        #expect(answer.answeredAt == Self.requestedAt.adding(milliseconds: 3_600_000))
        #expect(
            try answer.request.map { try AppStoreJSON.decode(ConsumptionRequest.self, from: Data($0.utf8)) } == expected
        )
        #expect(answer.refundOutcome == nil)

        // Apple declines the refund: linked to the request and counted, once.
        setup.harness.clock.set(Self.requestedAt.plus(days: 1))
        try await setup.notify(.refundDeclined, id, signed: Self.requestedAt.plus(days: 1))
        try await setup.notify(.refundDeclined, id, signed: Self.requestedAt.plus(days: 1.5))
        let linked = try #require(try await setup.answer(uuid))
        #expect(linked.refundOutcome == "REFUND_DECLINED")
        #expect(linked.refundOutcomeAt == Self.requestedAt.plus(days: 1))
        let metrics = try await setup.harness.request("GET", "/metrics").text
        #expect(metrics.contains("storekeeper_consumption_answers_total{outcome=\"sent\"} 1\n"))
        #expect(metrics.contains("storekeeper_consumption_refund_outcomes_total{outcome=\"REFUND_DECLINED\"} 1\n"))
        #expect(metrics.contains("storekeeper_jobs_total{kind=\"consumption_request\",outcome=\"completed\"} 1\n"))
    }

    @Test func reportedDeliveryAndUsageWinOverThePolicy() async throws {
        let setup = try await Setup(policy: ["refundPreference": "GRANT_FULL", "defaultDeliveryStatus": "DELIVERED"])
        defer { Task { await setup.harness.stop() } }
        let used = try await setup.purchase(by: "carol")
        let broken = try await setup.purchase(by: "carol")
        try await setup.consent("carol", true)
        for (id, body) in [
            (used, ["deliveryStatus": "DELIVERED", "consumptionPercentage": 75_000] as [String: Any]),
            (broken, ["deliveryStatus": "UNDELIVERED_SERVER_OUTAGE"]),
        ] {
            let reported = try await setup.harness.request(
                "PUT", "/v1/apps/\(setup.app.appId)/transactions/\(id)/consumption", key: setup.app.secretKey,
                json: body)
            #expect(reported.status == 200, "\(reported.text)")
        }
        setup.harness.clock.set(Self.requestedAt)
        try await setup.notify(.consumptionRequest, used, signed: Self.requestedAt)
        try await setup.notify(.consumptionRequest, broken, signed: Self.requestedAt)
        #expect(await setup.harness.application.jobWorker.runDue() == 2)
        #expect(
            setup.sent == [
                used: ConsumptionRequest(
                    customerConsented: true, consumptionPercentage: 75_000, deliveryStatus: RawEnum(.delivered),
                    refundPreference: RawEnum(.grantFull), sampleContentProvided: false),
                // Nothing delivered was consumed.
                broken: ConsumptionRequest(
                    customerConsented: true, consumptionPercentage: 0,
                    deliveryStatus: RawEnum(.undeliveredServerOutage), refundPreference: RawEnum(.grantFull),
                    sampleContentProvided: false),
            ])
    }

    @Test func proratedSubscriptionRefundOmitsThePercentage() async throws {
        let setup = try await Setup(policy: ["refundPreference": "GRANT_PRORATED"])
        defer { Task { await setup.harness.stop() } }
        let id = try await setup.purchase(by: "dave")
        try await setup.consent("dave", true)
        setup.harness.clock.set(Self.requestedAt)
        try await setup.notify(.consumptionRequest, id, signed: Self.requestedAt)
        #expect(await setup.harness.application.jobWorker.runDue() == 1)
        #expect(
            setup.sent == [
                id: ConsumptionRequest(
                    customerConsented: true, deliveryStatus: RawEnum(.delivered),
                    refundPreference: RawEnum(.grantProrated), sampleContentProvided: false)
            ])
    }

    @Test func withoutConsentNothingIsSentAndTheReasonIsRecorded() async throws {
        let setup = try await Setup(policy: ["refundPreference": "DECLINE"])
        defer { Task { await setup.harness.stop() } }
        let refusedBy = try await setup.purchase(by: "erin")
        let unknownFor = try await setup.purchase(by: "frank")
        try await setup.consent("erin", true)
        try await setup.consent("erin", false)  // the latest word counts
        setup.harness.clock.set(Self.requestedAt)
        let refused = try await setup.notify(.consumptionRequest, refusedBy, signed: Self.requestedAt)
        let unknown = try await setup.notify(.consumptionRequest, unknownFor, signed: Self.requestedAt)
        #expect(await setup.harness.application.jobWorker.runDue() == 2)
        #expect(setup.sent.isEmpty)
        #expect(setup.fake.calls.withLock { $0.filter { $0.hasPrefix("consumption") } }.isEmpty)
        let refusedAnswer = try #require(try await setup.answer(refused))
        #expect(refusedAnswer.outcome == "withheld")
        #expect(refusedAnswer.reason == "consumption.consentRefused: The customer did not consent.")
        #expect(refusedAnswer.request == nil)
        let unknownAnswer = try #require(try await setup.answer(unknown))
        #expect(unknownAnswer.outcome == "withheld")
        #expect(
            unknownAnswer.reason == "consumption.consentUnknown: The app has not reported the customer's consent.")
        // Both jobs are done: nothing is retried.
        #expect(await setup.harness.application.jobWorker.runDue() == 0)
        let metrics = try await setup.harness.request("GET", "/metrics").text
        #expect(metrics.contains("storekeeper_consumption_answers_total{outcome=\"withheld\"} 2\n"))
    }

    @Test func aRequestPastApplesWindowIsNotAnswered() async throws {
        let setup = try await Setup(policy: [:])
        defer { Task { await setup.harness.stop() } }
        let id = try await setup.purchase(by: "gina")
        try await setup.consent("gina", true)
        setup.harness.clock.set(Self.requestedAt)
        let uuid = try await setup.notify(.consumptionRequest, id, signed: Self.requestedAt)
        setup.harness.clock.set(Self.requestedAt.adding(milliseconds: ConsumptionDecision.windowMilliseconds))
        #expect(await setup.harness.application.jobWorker.runDue() == 1)
        #expect(setup.sent.isEmpty)
        let answer = try #require(try await setup.answer(uuid))
        #expect(answer.outcome == "withheld")
        #expect(answer.reason == "consumption.windowPassed: Apple's 12-hour window to answer has passed.")
    }

    @Test func reportsAreCheckedAndThePolicyIsShownByTheAdminAPI() async throws {
        let setup = try await Setup(policy: ["refundPreference": "DECLINE", "sampleContentProvided": true])
        defer { Task { await setup.harness.stop() } }
        let path = "/v1/apps/\(setup.app.appId)/transactions/2000000000000001/consumption"
        let refused: [[String: Any]] = [
            ["deliveryStatus": "LOST"], ["deliveryStatus": "DELIVERED", "consumptionPercentage": 100_001],
            ["deliveryStatus": "DELIVERED", "consumptionPercentage": -1],
            ["deliveryStatus": "UNDELIVERED_OTHER", "consumptionPercentage": 10],
        ]
        for body in refused {
            let answer = try await setup.harness.request("PUT", path, key: setup.app.secretKey, json: body)
            #expect(answer.status == 400, "\(body)")
            #expect((answer.json["error"] as? [String: Any])?["code"] as? String == "invalid_body", "\(body)")
        }
        let badId = try await setup.harness.request(
            "PUT", "/v1/apps/\(setup.app.appId)/transactions/abc/consumption", key: setup.app.secretKey,
            json: ["deliveryStatus": "DELIVERED"])
        #expect(badId.status == 400)
        // What Apple is told about delivery is the backend's word: the public key the app ships
        // (and a refund requester can take from it) cannot write it.
        let fromTheApp = try await setup.harness.request(
            "PUT", path, key: setup.app.publicKey, json: ["deliveryStatus": "UNDELIVERED_OTHER"])
        #expect(fromTheApp.status == 403)
        // Consent is for a customer the app has: an unknown id is 404 and leaves no row.
        let stranger = try await setup.harness.request(
            "PUT", "/v1/apps/\(setup.app.appId)/customers/nobody-\(uniqueDigits())/consumption-consent",
            key: setup.app.publicKey, json: ["consented": true])
        #expect(stranger.status == 404)
        #expect((stranger.json["error"] as? [String: Any])?["code"] as? String == "customer_not_found")
        let shown = try await setup.harness.request(
            "GET", "/v1/admin/apps/\(setup.app.appId)", key: ServerHarness.adminKey)
        let policy = shown.json["consumption"] as? [String: Any]
        #expect(policy?["refundPreference"] as? String == "DECLINE")
        #expect(policy?["sampleContentProvided"] as? Bool == true)
        #expect(policy?["defaultDeliveryStatus"] as? String == "DELIVERED")
        #expect(policy?["estimateSubscriptionUsage"] as? Bool == true)
        let badPolicy = try await setup.harness.request(
            "PUT", "/v1/admin/apps/\(setup.app.appId)", key: ServerHarness.adminKey,
            json: ["consumption": ["refundPreference": "MAYBE"]])
        #expect(badPolicy.status == 400)
    }
}
