import AppStoreModels
import AppStoreTrust
import Foundation

/// The outcome of one scenario step.
/// - Note: Immutable value; `Sendable`.
public struct ScenarioStepReport: Sendable, Codable {
    public var index: Int
    public var action: String
    public var passed: Bool
    public var problems: [String]
    public var notifications: [ActionResult.ProducedNotification]

    public init(
        index: Int, action: String, passed: Bool, problems: [String], notifications: [ActionResult.ProducedNotification]
    ) {
        (self.index, self.action, self.passed, self.problems, self.notifications) =
            (index, action, passed, problems, notifications)
    }
}

/// The outcome of a scenario run.
/// - Note: Immutable value; `Sendable`.
public struct ScenarioReport: Sendable, Codable {
    public var name: String
    public var steps: [ScenarioStepReport]
    public var passed: Bool { steps.allSatisfy(\.passed) }

    public init(name: String, steps: [ScenarioStepReport]) {
        self.name = name
        self.steps = steps
    }
}

/// Runs a scenario against a simulator: sets up its app and customers, performs each step and
/// checks the expected outcome. With a manual clock, time travels instantly; with an
/// accelerated one, `advanceTime` / `renew` wait (ticking) until the compressed time passed.
public struct ScenarioRunner: Sendable {
    public let simulator: AppStoreSimulator

    public init(simulator: AppStoreSimulator) { self.simulator = simulator }

    /// Builds the simulator the scenario asks for.
    public static func makeSimulator(
        for scenario: Scenario, authority: TestCertificateAuthority, start: Timestamp,
        transport: any NotificationTransport = URLSessionNotificationTransport(), notificationURL: String? = nil
    ) async throws(SimulatorError) -> AppStoreSimulator {
        let clock: any SimulatorClock
        let scale: TimeScale
        if scenario.clock?.mode == "accelerated" {
            clock = RealTimeClock()
            scale = .accelerated(monthSeconds: scenario.clock?.monthSeconds ?? 300)
        } else {
            clock = ManualClock(scenario.clock?.start ?? start)
            scale = scenario.clock?.monthSeconds.map { .accelerated(monthSeconds: $0) } ?? .calendar
        }
        let simulator = AppStoreSimulator(
            environment: scenario.environment ?? .sandbox, authority: authority, clock: clock, scale: scale,
            transport: transport)
        var app = scenario.app
        if let notificationURL { app.notificationURL = notificationURL }
        try await simulator.addApp(app)
        for customer in scenario.customers { await simulator.addCustomer(customer) }
        return simulator
    }

    /// Runs the steps in order, `log`ging each; `shouldStop` is asked before each step after the
    /// first (an interrupted run reports the steps done).
    public func run(
        _ scenario: Scenario, log: @Sendable (String) -> Void = { _ in }, shouldStop: @Sendable () -> Bool = { false }
    ) async -> ScenarioReport {
        var reports: [ScenarioStepReport] = []
        for (index, step) in scenario.steps.enumerated() {
            if index > 0, shouldStop() { break }
            let report = await run(step, number: index + 1)
            log(Self.line(report))
            reports.append(report)
        }
        return ScenarioReport(name: scenario.name, steps: reports)
    }

    /// Performs one step (`number`: its place in the file, from 1) and checks its expectation.
    public func run(_ step: Scenario.Step, number: Int) async -> ScenarioStepReport {
        var problems: [String] = []
        var produced: [ActionResult.ProducedNotification] = []
        do {
            if let waited = await waitIfAccelerated(step.action) {
                produced = waited
            } else {
                produced = try await simulator.perform(step.action).notifications
            }
            if let expected = step.expect?.error {
                problems.append("expected error \(expected), the step succeeded")
            }
        } catch {
            if step.expect?.error != error.code.rawValue {
                problems.append("failed: \(error.description)")
            }
        }
        if let expected = step.expect?.notifications {
            let actual = produced.map {
                Scenario.ExpectedNotification(type: $0.notificationType, subtype: $0.subtype, customer: $0.customer)
            }
            problems += Self.compare(expected, actual)
        }
        for want in step.expect?.subscriptions ?? [] {
            let status = await simulator.subscriptionStatus(customer: want.customer, productId: want.productId)
            let name = status.map(Self.name) ?? "none"
            if name != want.status {
                problems.append("\(want.customer) \(want.productId): expected \(want.status), got \(name)")
            }
        }
        return ScenarioStepReport(
            index: number, action: step.action.action.rawValue, passed: problems.isEmpty, problems: problems,
            notifications: produced)
    }

    /// The problem, if any, with the notifications a step sent: `expected` lists them all, in
    /// order; one without `customer` matches any customer.
    public static func compare(
        _ expected: [Scenario.ExpectedNotification], _ actual: [Scenario.ExpectedNotification]
    ) -> [String] {
        let comparable = zip(expected, actual).map { want, got in
            Scenario.ExpectedNotification(
                type: got.type, subtype: got.subtype, customer: want.customer == nil ? nil : got.customer)
        }
        guard expected.count != actual.count || comparable != expected else { return [] }
        return ["notifications: expected \(describe(expected)), got \(describe(actual))"]
    }

    /// The line a run prints for a step: `ok   3 renew → DID_RENEW`, and its problems.
    public static func line(_ report: ScenarioStepReport) -> String {
        "\(report.passed ? "ok  " : "FAIL") \(report.index) \(report.action)"
            + (report.notifications.isEmpty
                ? ""
                : " → "
                    + describe(
                        report.notifications.map {
                            Scenario.ExpectedNotification(
                                type: $0.notificationType, subtype: $0.subtype, customer: $0.customer)
                        }))
            + (report.problems.isEmpty ? "" : "\n     " + report.problems.joined(separator: "\n     "))
    }

    /// On the wall clock, time travel is waiting: tick until the compressed time has passed.
    /// Returns what was produced meanwhile, or nil when the step is not a wait.
    private func waitIfAccelerated(_ action: SimulatorAction) async -> [ActionResult.ProducedNotification]? {
        guard !(simulator.clock is ManualClock) else { return nil }
        let now = simulator.clock.now
        var target: Timestamp?
        switch action.action {
        case .advanceTime:
            var instant = now
            if let duration = action.duration { instant = simulator.scale.adding(duration, to: instant) }
            if let hours = action.hours {
                instant = instant.adding(milliseconds: simulator.scale.milliseconds(hours: hours))
            }
            if let days = action.days {
                instant = instant.adding(milliseconds: simulator.scale.milliseconds(days: Double(days)))
            }
            target = instant
        case .renew:
            guard let customer = action.customer, let productId = action.productId else { return nil }
            target = await simulator.nextDueEvent(customer: customer, productId: productId)
        default:
            return nil
        }
        let before = await simulator.producedNotifications().count
        while let target, simulator.clock.now < target {
            try? await Task.sleep(for: .milliseconds(50))
            await simulator.tick()
        }
        await simulator.tick()
        return await simulator.producedNotifications().dropFirst(before).map {
            ActionResult.ProducedNotification(
                notificationUUID: $0.notificationUUID, notificationType: $0.notificationType, subtype: $0.subtype,
                customer: $0.customer, originalTransactionId: nil)
        }
    }

    static func name(_ status: Status) -> String {
        switch status {
        case .active: "active"
        case .expired: "expired"
        case .billingRetry: "billingRetry"
        case .billingGracePeriod: "billingGracePeriod"
        case .revoked: "revoked"
        }
    }

    public static func describe(_ notifications: [Scenario.ExpectedNotification]) -> String {
        notifications.isEmpty
            ? "none"
            : notifications.map { $0.type + ($0.subtype.map { "/" + $0 } ?? "") }.joined(separator: ", ")
    }
}

extension AppStoreSimulator {
    /// When the customer's subscription in the group of `productId` next changes by itself.
    public func nextDueEvent(customer: String, productId: String) -> Timestamp? {
        guard let (app, product) = try? state.product(productId, bundleId: nil), let groupId = product.groupId,
            let subscription = state.ownSubscription(customer: customer, bundleId: app.bundleId, groupId: groupId)
        else { return nil }
        return state.nextDueEvent(for: subscription.originalTransactionId)
    }
}
