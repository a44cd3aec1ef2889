import AppStoreClient
import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import GooglePlaySimulator
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Runs an `EndToEndScenario` on a fresh `EndToEndHarness` and records every expectation that
/// does not hold as a test issue naming the scenario and step.
struct EndToEndRunner {
    let scenario: EndToEndScenario
    let harness: EndToEndHarness
    let play: PlayScenarioDriver

    init(scenario: EndToEndScenario, harness: EndToEndHarness) {
        self.scenario = scenario
        self.harness = harness
        play = PlayScenarioDriver(
            play: harness.play, packageName: harness.scenarioPlayPackage, products: scenario.app.products,
            timeline: ManualPlayTimeline(clock: harness.clock))
    }

    static func run(_ file: String, on database: TestDatabase) async throws {
        let scenario = try EndToEndScenario.load(file)
        let harness = try await EndToEndHarness(database: database)
        do {
            try await harness.configure(scenario)
            try await EndToEndRunner(scenario: scenario, harness: harness).run()
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    func run() async throws {
        for (index, checked) in scenario.steps.enumerated() {
            let label = "\(scenario.name), step \(index + 1)" + (checked.note.map { " (\($0))" } ?? "")
            let pushed = await harness.play.pushes.count
            try await perform(checked.step, label: label)
            // The clock is shared: the Play simulator applies what time did during any step.
            await harness.play.tick()
            try await checkPlayPushes(since: pushed, step: checked.step, label: label)
            for expectation in checked.check {
                try await verify(expectation, customer: expectation.customer ?? "", label: label)
            }
        }
        try await deliverWebhooks()
        for (customer, expectation) in scenario.expect.sorted(by: { $0.key < $1.key }) {
            try await verify(expectation, customer: customer, label: "\(scenario.name), final state")
        }
        try await verifyWebhooks()
    }

    // MARK: Steps

    private func perform(_ step: EndToEndScenario.Step, label: String) async throws {
        switch step {
        case .simulator(let action, let expect):
            let result: ActionResult
            do {
                result = try await harness.simulator.perform(action)
            } catch {
                throw EndToEndFailure("\(label): the simulator refused \(action.action.rawValue): \(error)")
            }
            if let expected = expect?.notifications {
                let produced = result.notifications.map {
                    EndToEndScenario.SimulatorExpectation.Notification(
                        type: $0.notificationType, subtype: $0.subtype, customer: $0.customer)
                }
                Self.expectSent(
                    produced, expected, noun: "notifications", known: expect?.knownIssue, label: label)
            }
            for want in expect?.subscriptions ?? [] {
                let status = await harness.simulator.subscriptionStatus(
                    customer: want.customer, productId: want.productId)
                #expect(
                    status.map(Self.name) == want.status,
                    "\(label): \(want.customer) \(want.productId) is \(status.map(Self.name) ?? "none")")
            }
        case .postTransaction(let customer, let productId):
            let signed = try await latestSignedTransaction(of: customer, productId: productId)
            try harness.expect(
                200,
                await harness.request(
                    "POST", "/v1/apps/\(harness.appId)/customers/\(customer)/transactions", key: harness.publicKey,
                    json: ["signedTransaction": signed]))
        case .restore(let customer):
            try harness.expect(
                200,
                await harness.request(
                    "POST", "/v1/apps/\(harness.appId)/customers/\(customer)/restore", key: harness.publicKey))
        case .replayNotificationHistory:
            let replayed = try await replayFailedNotifications()
            #expect(replayed > 0, "\(label): the history held no undelivered notification to replay")
        case .dropNotifications(let drop):
            await harness.simulator.setLossPolicy(drop ? NotificationLossPolicy(fraction: 1) : .none)
        case .play(let action, _):
            do {
                try await play.perform(action)
            } catch {
                throw EndToEndFailure("\(label): the Play simulator refused \(action.action.rawValue): \(error)")
            }
            // A Play step may have travelled the shared clock: the App Store applies it too.
            await harness.simulator.tick()
            // Storekeeper's jobs (the acknowledgement of a Play purchase) run as the worker would.
            _ = await harness.application.jobWorker.runDue()
        case .postPurchaseToken(let customer, let productId):
            let (token, product) = try await play.token(of: customer, productId: productId)
            try harness.expect(
                200,
                await harness.request(
                    "POST", "/v1/apps/\(harness.appId)/customers/\(customer)/purchases/googleplay",
                    key: harness.publicKey,
                    json: [
                        "packageName": harness.scenarioPlayPackage, "productId": product, "purchaseToken": token,
                        "type": await play.isSubscription(product) ? "subscription" : "product",
                    ]))
            _ = await harness.application.jobWorker.runDue()
        }
    }

    /// Every Play push since `since` reached Storekeeper's Play route and was answered 200; a
    /// Play step's `expect` lists them (Google's type names; a voided purchase's refund type as
    /// the subtype) and the Play simulator's subscription states afterwards.
    private func checkPlayPushes(since: Int, step: EndToEndScenario.Step, label: String) async throws {
        let pushes = await harness.play.pushes.dropFirst(since)
        for push in pushes where push.status != 200 {
            let kind = PlayScenarioDriver.describe(push.notification).type
            Issue.record("\(label): the push \(kind) got \(push.status.map(String.init) ?? "no answer"), not 200")
        }
        guard case .play(_, let expect) = step else { return }
        if let expected = expect?.notifications {
            var produced: [EndToEndScenario.SimulatorExpectation.Notification] = []
            for push in pushes {
                let (type, subtype, token) = PlayScenarioDriver.describe(push.notification)
                produced.append(.init(type: type, subtype: subtype, customer: await play.owner(of: token)))
            }
            Self.expectSent(produced, expected, noun: "pushes", known: expect?.knownIssue, label: label)
        }
        for want in expect?.subscriptions ?? [] {
            let state = try await play.state(of: want.customer, productId: want.productId)
            #expect(
                state == want.status, "\(label): \(want.customer) \(want.productId) is \(state ?? "none") on Play")
        }
    }

    /// Runs the notifications check, as a known issue when the step's expectation names one.
    private static func expect(known issue: String?, label: String, _ check: () -> Void) {
        guard let issue else { return check() }
        withKnownIssue(Comment(rawValue: "\(label): \(issue)")) { check() }
    }

    /// What StoreKit hands the app after a purchase: the customer's latest transaction (of
    /// `productId` when given), signed.
    private func latestSignedTransaction(of customer: String, productId: String?) async throws -> String {
        let signed = try await harness.simulator.signedTransactions(customer: customer)
        let matching = signed.filter { jws in
            guard let productId else { return true }
            return Self.payload(of: jws)?.productId == productId
        }
        guard let latest = matching.last else {
            throw EndToEndFailure("\(customer) has no transaction\(productId.map { " of \($0)" } ?? "")")
        }
        return latest
    }

    static func payload(of jws: String) -> JWSTransactionDecodedPayload? {
        UnverifiedJWS.payload(jws, as: JWSTransactionDecodedPayload.self)
    }

    /// The operator's recovery from lost notifications: Get Notification History with
    /// `onlyFailures` from the App Store, every page, each payload handed to Storekeeper's
    /// ingestion directly, without HTTP (duplicates are no-ops there), as the replay worker will.
    private func replayFailedNotifications() async throws -> Int {
        let now = harness.clock.now
        let client = try AppStoreServerAPIClient(
            configuration: try AppStoreServerAPIConfiguration(
                bundleId: scenario.app.bundleId, keyId: EndToEndHarness.keyId, issuerId: EndToEndHarness.issuerId,
                environment: .sandbox, baseURL: harness.simulatorServer.baseURL),
            signingKey: harness.apiKey, tokenClock: { [clock = harness.clock] in clock.now })
        var request = NotificationHistoryRequest()
        request.startDate = now.adding(milliseconds: -29 * 86_400_000)
        request.endDate = now.adding(milliseconds: 1)
        request.onlyFailures = true
        var token: String?
        var replayed = 0
        let ingestion = harness.application.ingestion
        let app = try await ingestion.apps.runtime(appId: harness.appId)
        for _ in 0..<100 {
            let page = try await client.getNotificationHistory(paginationToken: token, request: request)
            for item in page.notificationHistory ?? [] {
                guard let signedPayload = item.signedPayload else { continue }
                let result = try await ingestion.notifications.ingest(app: app, signedPayload: signedPayload)
                #expect(result.outcome != .recorded, "a replayed notification about a purchase was only recorded")
                replayed += 1
            }
            guard page.hasMore == true, let next = page.paginationToken else { break }
            token = next
        }
        return replayed
    }

    // MARK: Checks

    private func verify(_ expectation: EndToEndScenario.CustomerExpectation, customer: String, label: String)
        async throws
    {
        guard let knownIssue = expectation.knownIssue else {
            return try await check(expectation, customer: customer, label: label)
        }
        await withKnownIssue(Comment(rawValue: "\(label): \(knownIssue)")) {
            try await check(expectation, customer: customer, label: label)
        }
    }

    private func check(_ expectation: EndToEndScenario.CustomerExpectation, customer: String, label: String)
        async throws
    {
        let info = try harness.expect(
            200,
            await harness.request("GET", "/v1/apps/\(harness.appId)/customers/\(customer)", key: harness.publicKey))
        if let active = expectation.active {
            let entitlements = info.json["entitlements"] as? [String: Any] ?? [:]
            let actual = entitlements.compactMap { id, value in
                ((value as? [String: Any])?["isActive"] as? Bool) == true ? id : nil
            }.sorted()
            #expect(
                actual == active.sorted(), "\(label): \(customer) has active \(actual), expected \(active.sorted())")
        }
        let exact = [("entitlements", expectation.entitlements), ("subscriptions", expectation.subscriptions)]
        for (field, expected) in exact {
            guard let raw = expected else { continue }
            let expected = ScenarioJSON.resolve(.object(raw), await play.placeholders())
            let actual = try JSONDecoder().decode(CustomerInfoFields.self, from: info.body)
            let shown = (field == "entitlements" ? actual.entitlements : actual.subscriptions) ?? [:]
            #expect(
                ScenarioJSON.matches(expected, .object(shown)),
                "\(label): \(customer) has \(field) \(ScenarioJSON.text(.object(shown))), expected \(ScenarioJSON.text(expected))"
            )
        }
        if let events = expectation.events {
            let actual = try await self.events(of: customer)
            #expect(
                actual.map(\.type) == events,
                "\(label): \(customer) has events \(actual.map(\.type)), expected \(events): \(actual.map(\.summary))")
        }
    }

    /// A customer's lifecycle events as the events API lists them: type and summary.
    private func events(of customer: String) async throws -> [(type: String, summary: String)] {
        let answer = try await harness.request(
            "GET", "/v1/apps/\(harness.appId)/customers/\(customer)/events?limit=500", key: harness.secretKey)
        guard answer.status == 200 else { return [] }
        return (answer.json["events"] as? [[String: Any]] ?? []).compactMap {
            guard let event = $0["event"] as? [String: Any], let type = event["type"] as? String else { return nil }
            return (type, event["summary"] as? String ?? "")
        }
    }

    // MARK: Webhooks

    private func deliverWebhooks() async throws {
        for _ in 0..<50 where await harness.application.webhookDeliverer.deliverDue() > 0 {}
    }

    /// Every customer's webhooks reached the listener, signed with the endpoint's secret, one
    /// per event and in the order of the events API.
    private func verifyWebhooks() async throws {
        let deliveries = harness.webhooks.deliveries
        let now = harness.clock.now.secondsSince1970
        for delivery in deliveries {
            let header = delivery.headers[WebhookSignature.headerName] ?? ""
            #expect(
                WebhookSignature.isValid(
                    header: header, body: delivery.body, secret: harness.webhookSecret, nowUnixSeconds: now),
                "\(scenario.name): webhook \(delivery.type ?? "?") has no valid signature")
        }
        var total = 0
        for customer in scenario.customers.map(\.id) {
            let events = try await self.events(of: customer).map(\.type)
            total += events.count
            let delivered = deliveries.filter { $0.appUserId == customer }.compactMap(\.type)
            #expect(delivered == events, "\(scenario.name): \(customer) got webhooks \(delivered) for events \(events)")
        }
        #expect(deliveries.count == total, "\(scenario.name): \(deliveries.count) webhooks for \(total) events")
    }

    // MARK: Descriptions

    static func name(_ status: Status) -> String {
        switch status {
        case .active: "active"
        case .expired: "expired"
        case .billingRetry: "billingRetry"
        case .billingGracePeriod: "billingGracePeriod"
        case .revoked: "revoked"
        }
    }

    /// What a store sent in a step against the scenario's list: types and subtypes in order, the
    /// customer only where the scenario names one. One check for App Store notifications and
    /// Play pushes.
    static func expectSent(
        _ produced: [EndToEndScenario.SimulatorExpectation.Notification],
        _ expected: [EndToEndScenario.SimulatorExpectation.Notification], noun: String,
        known: String?, label: String
    ) {
        let comparable = zip(expected, produced).map { want, got in
            EndToEndScenario.SimulatorExpectation.Notification(
                type: got.type, subtype: got.subtype, customer: want.customer == nil ? nil : got.customer)
        }
        expect(known: known, label: label) {
            #expect(
                expected.count == produced.count && comparable == expected,
                "\(label): \(noun) \(describe(produced)), expected \(describe(expected))")
        }
    }

    static func describe(_ notifications: [EndToEndScenario.SimulatorExpectation.Notification]) -> String {
        notifications.isEmpty
            ? "none" : notifications.map { $0.type + ($0.subtype.map { "/" + $0 } ?? "") }.joined(separator: ", ")
    }
}
