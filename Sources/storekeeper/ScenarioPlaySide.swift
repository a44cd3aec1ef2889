import AppStoreModels
import AppStoreSimulator
import Foundation
import GooglePlayModels
import GooglePlaySimulator
import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `simulate run`'s Google Play half, for a scenario file with `play_store` steps: the Play
/// simulator on the scenario's accelerated clock (its periods, grace and hold compressed as the
/// App Store simulator's), served on `--play-port` with the keys of `--data` (the service
/// account the app's Play side holds, the push-signing key its `playPushKeySet` trusts), pushing
/// to the server's real Play route (`--play-target`). Each step runs through the
/// `PlayScenarioDriver` the end-to-end harness uses; `app: postTransaction` posts the
/// customer's purchase token as the app would (with `--public-key`).
/// - Note: Immutable; its simulator and driver are actors. One scenario run uses it.
struct ScenarioPlaySide: Sendable {
    let simulator: PlaySimulator
    let server: HTTPServer
    let driver: PlayScenarioDriver
    let packageName: String
    /// `…/v1/apps/{appId}` of the server, from `--play-target`.
    let appBase: String?
    let publicKey: String?
    let pushesAnswered: Bool

    /// The Play step's expectation: the pushes it caused and the simulator's states after it.
    struct Step: Decodable {
        static let numberKey = CodingUserInfoKey(rawValue: "storekeeper.simulate.step")!

        var action: PlayScenarioAction?
        var postCustomer: String?
        var postProductId: String?
        var expect: Scenario.Expectation?

        private enum CodingKeys: String, CodingKey { case action, app, customer, productId, expect }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let step = "step \(decoder.userInfo[Self.numberKey] as? Int ?? 0)"
            expect = try container.decodeIfPresent(Scenario.Expectation.self, forKey: .expect)
            if container.contains(.action) {
                action = try PlayScenarioAction(from: decoder, at: step)
                return
            }
            guard try container.decodeIfPresent(String.self, forKey: .app) == "postTransaction" else {
                throw PlayScenarioError("\(step): a play_store step is an action or the app's postTransaction")
            }
            postCustomer = try container.decode(String.self, forKey: .customer)
            postProductId = try container.decodeIfPresent(String.self, forKey: .productId)
        }
    }

    static func start(
        scenario: Scenario, appStore: AppStoreSimulator, data: URL, port: UInt16, target: String?,
        audience: String, packageName: String, publicKey: String?
    ) async throws -> ScenarioPlaySide {
        guard scenario.clock?.mode == "accelerated" else {
            throw UsageError(
                "a scenario with play_store steps needs \"clock\": {\"mode\": \"accelerated\"}: the server checks "
                    + "the Play simulator's push tokens and OAuth assertions against its own clock")
        }
        var pushURL: URL?
        var appBase: String?
        if let target {
            let suffix = "/notifications/googleplay"
            guard let url = URL(string: target), url.scheme == "http" || url.scheme == "https", target.hasSuffix(suffix)
            else { throw UsageError("--play-target must be the server's …/v1/apps/{appId}\(suffix) URL") }
            pushURL = url
            appBase = String(target.dropLast(suffix.count))
        }
        let scale = appStore.scale
        let files = try PlaySimulatorData.open(
            data, tokenURI: URL(string: "http://127.0.0.1:\(port)/token")!)
        let simulator = try PlaySimulator(
            packageNames: [packageName], clock: appStore.clock, push: .init(url: pushURL, audience: audience),
            gracePeriodMillis: scale.milliseconds(days: 3), holdPeriodMillis: scale.milliseconds(days: 30),
            signingKey: files.pushKey)
        _ = await simulator.registerServiceAccount(
            email: files.serviceAccount.clientEmail, publicKey: files.serviceAccount.privateKey.publicKey,
            keyId: files.serviceAccount.privateKeyId, tokenURI: files.serviceAccount.tokenURI)
        var router = Router()
        PlaySimulatorRoutes.add(simulator, to: &router)
        let server = try HTTPServer(
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: port),
            responder: router.buildResponder())
        // While a step waits for its instant only the App Store applies what time does: the Play
        // simulator applies it after the step, as in the harness (ticking it on the way would
        // renew or expire a subscription before the step's own renew or expire).
        let timeline = AcceleratedPlayTimeline(clock: appStore.clock, scale: scale) { await appStore.tick() }
        let driver = PlayScenarioDriver(
            play: simulator, packageName: packageName, products: scenario.app.products, timeline: timeline)
        print(
            "Google Play simulator at \(server.baseURL.absoluteString) (package \(packageName); service account "
                + "\(files.serviceAccountFile.path))" + (target.map { ", pushes to \($0)" } ?? ""))
        return ScenarioPlaySide(
            simulator: simulator, server: server, driver: driver, packageName: packageName, appBase: appBase,
            publicKey: publicKey, pushesAnswered: pushURL != nil)
    }

    /// Runs the `play_store` step `json` (`number`: its place in the file, from 1).
    func run(_ json: Data, number: Int) async -> ScenarioStepReport {
        let decoder = JSONDecoder()
        decoder.userInfo[Step.numberKey] = number
        let step: Step
        do {
            step = try decoder.decode(Step.self, from: json)
        } catch {
            return ScenarioStepReport(
                index: number, action: "play", passed: false, problems: ["\(error)"], notifications: [])
        }
        var problems: [String] = []
        let before = await simulator.pushes.count
        let name: String
        if let action = step.action {
            name = "play " + action.action.rawValue
            do {
                try await driver.perform(action)
            } catch {
                problems.append("failed: \(error)")
            }
        } else {
            name = "play postTransaction"
            problems += await post(customer: step.postCustomer ?? "", productId: step.postProductId)
        }
        // What time did meanwhile, as after every step of the harness.
        await simulator.tick()
        let pushes = await simulator.pushes.dropFirst(before)
        var produced: [ActionResult.ProducedNotification] = []
        for push in pushes {
            let (type, subtype, token) = PlayScenarioDriver.describe(push.notification)
            if pushesAnswered, push.status != 200 {
                problems.append("the push \(type) got \(push.status.map(String.init) ?? "no answer"), not 200")
            }
            produced.append(
                ActionResult.ProducedNotification(
                    notificationUUID: push.request.message.messageId, notificationType: type, subtype: subtype,
                    customer: await driver.owner(of: token), originalTransactionId: token))
        }
        if let expected = step.expect?.notifications {
            problems += ScenarioRunner.compare(
                expected,
                produced.map {
                    Scenario.ExpectedNotification(type: $0.notificationType, subtype: $0.subtype, customer: $0.customer)
                })
        }
        for want in step.expect?.subscriptions ?? [] {
            let state = try? await driver.state(of: want.customer, productId: want.productId)
            if state != want.status {
                problems.append("\(want.customer) \(want.productId): expected \(want.status), got \(state ?? "none")")
            }
        }
        return ScenarioStepReport(
            index: number, action: name, passed: problems.isEmpty, problems: problems, notifications: produced)
    }

    /// The app posts the customer's purchase token to the server; problems, if any.
    private func post(customer: String, productId: String?) async -> [String] {
        guard let appBase, let publicKey else {
            return ["postTransaction needs --play-target and --public-key (the app's public key)"]
        }
        do {
            let (token, product) = try await driver.token(of: customer, productId: productId)
            let path = customer.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? ""
            var request = URLRequest(url: URL(string: "\(appBase)/customers/\(path)/purchases/googleplay")!)
            request.httpMethod = "POST"
            request.setValue("Bearer \(publicKey)", forHTTPHeaderField: "Authorization")
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: [
                "packageName": packageName, "productId": product, "purchaseToken": token,
                "type": await driver.isSubscription(product) ? "subscription" : "product",
            ])
            request.timeoutInterval = 30
            let (body, response) = try await URLSession.shared.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200 else {
                return ["the server answered \(status): \(String(decoding: body.prefix(300), as: UTF8.self))"]
            }
            return []
        } catch {
            return ["postTransaction failed: \(error)"]
        }
    }

    func stop() async { await server.stop() }
}
