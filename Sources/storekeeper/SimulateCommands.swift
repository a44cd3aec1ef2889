import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import HTTPServer

/// `storekeeper simulate …`: the App Store simulator as a process.
///
/// - `serve [--port N] [--host H] [--data DIR] [--month-seconds N] [--app FILE] [--notification-url URL]`
///   serves production at `/` and sandbox at `/sandbox` (Server API, verifyReceipt, admin API
///   under `/simulator/v1`) until interrupted. The CA and an API key live in `DIR`.
/// - `run SCENARIO [--target URL] [--data DIR] [--port N] [--play-target URL] [--play-port N] …`
///   runs a scenario file against an embedded simulator whose notifications go to `--target`
///   (and its `play_store` steps against the Google Play simulator, pushing to `--play-target`:
///   `ScenarioPlaySide`); exit 0 when every expectation held.
enum SimulateCommands {
    static let command: Command = Command(
        name: "simulate",
        summary: "the local App Store simulator (Server API, verifyReceipt, notifications, scenarios)",
        subcommands: [
            Command(
                name: "serve", summary: "serve production at / and sandbox at /sandbox until interrupted",
                options: [
                    Option(name: "--port", valueName: "N", help: "the port", defaultValue: "8090"),
                    Option(name: "--host", valueName: "H", help: "the address", defaultValue: "127.0.0.1"),
                    Option(
                        name: "--data", valueName: "DIR", help: "where the CA and API key live",
                        defaultValue: "data/simulator"),
                    Option(
                        name: "--month-seconds", valueName: "N",
                        help: "seconds of wall time per month (default: calendar time)"),
                    Option(name: "--app", valueName: "FILE", help: "the simulated app (JSON; default: the demo app)"),
                    Option(name: "--notification-url", valueName: "URL", help: "where notifications go"),
                    Option(
                        name: "--api-rate-percent", valueName: "N",
                        help: "the Server API's per-endpoint limits in percent of Apple's (none: no limit)",
                        defaultValue: "100"),
                ],
                action: { try await serve($0) }),
            Command(
                name: "run",
                summary: "run a scenario against an embedded simulator; exit 0 when every expectation held",
                arguments: [Argument(name: "SCENARIO", help: "the scenario file (JSON)")],
                options: [
                    Option(name: "--target", valueName: "URL", help: "where the simulator sends notifications"),
                    Option(
                        name: "--data", valueName: "DIR",
                        help: "where the CA, the API key and the Google Play simulator's keys live",
                        defaultValue: "data/simulator"),
                    Option(
                        name: "--port", valueName: "N", help: "the simulator's port (0: any free)", defaultValue: "0"),
                    Option(
                        name: "--play-target", valueName: "URL",
                        help: "where play_store steps push: the server's …/v1/apps/{appId}/notifications/googleplay"),
                    Option(
                        name: "--play-port", valueName: "N",
                        help: "the Google Play simulator's port (the server's playApiBaseURL names it)",
                        defaultValue: "8091"),
                    Option(
                        name: "--play-package", valueName: "NAME", help: "the Google Play package name",
                        defaultValue: "com.example.app"),
                    Option(
                        name: "--play-audience", valueName: "AUD", help: "the audience of the push OIDC tokens",
                        defaultValue: "storekeeper"),
                    Option(
                        name: "--public-key", valueName: "KEY",
                        help: "the app's public key, for play_store postTransaction steps"),
                ],
                action: { try await runScenario($0) }),
            SimulatePlayCommand.command,
        ])

    private static func serve(_ parsed: CommandLineArguments) async throws -> Int32 {
        let port = try UInt16(parsed.value("--port") ?? "8090").orThrow(UsageError("--port must be a port number"))
        let monthSeconds = try parsed.value("--month-seconds").map {
            try Double($0).orThrow(UsageError("--month-seconds must be a number"))
        }
        let rateText = parsed.value("--api-rate-percent") ?? "100"
        let rateLimits = ServerAPIRateLimits(percent: rateText == "none" ? nil : Double(rateText))
        guard rateText == "none" || Double(rateText) != nil, rateLimits.isValid else {
            throw UsageError("--api-rate-percent must be a number above 0 and at most 1000000, or none")
        }
        let now = Timestamp(Date())
        let data = try SimulatorDataDirectory.open(
            URL(fileURLWithPath: parsed.value("--data") ?? "data/simulator"), now: now)
        var app =
            try parsed.value("--app").map { path in
                try AppStoreJSON.decode(SimulatedApp.self, from: try Data(contentsOf: URL(fileURLWithPath: path)))
            } ?? SimulatedApp.demo()
        app.apiKeys.append(data.appStoreConnectKey)
        if let url = parsed.value("--notification-url") { app.notificationURL = url }
        let scale = monthSeconds.map { TimeScale.accelerated(monthSeconds: $0) } ?? .calendar
        let configuredApp = app
        var mounts: [(prefix: String, simulator: AppStoreSimulator)] = []
        for (prefix, environment) in [("", AppStoreEnvironment.production), ("/sandbox", .sandbox)] {
            let simulator = AppStoreSimulator(
                environment: environment, authority: data.authority, scale: scale, serverAPIRateLimits: rateLimits)
            try await simulator.addApp(configuredApp)
            mounts.append((prefix, simulator))
        }
        let server = try SimulatorServer(
            mounts: mounts,
            configuration: HTTPServer.Configuration(host: parsed.value("--host") ?? "127.0.0.1", port: port))
        let base = server.baseURL.absoluteString
        print(
            """
            App Store simulator listening on \(base)
              production: \(base)  sandbox: \(base)/sandbox
              Server API: \(base)/inApps/v1/…   verifyReceipt: \(base)/verifyReceipt
              admin API:  \(base)/simulator/v1/… (apps, customers, actions, notifications)
              CA root:    \(data.url.path)/ca/root.der    API key: \(data.url.path)/api-key.p8 \
            (keyId \(data.apiKeyId), issuerId \(data.issuerId))
              app:        \(configuredApp.bundleId) (appAppleId \(configuredApp.appAppleId)); \
            one month = \(monthSeconds.map { "\($0) s" } ?? "one calendar month")
            """)
        // Until SIGINT or SIGTERM; then the simulators' tickers and the server stop.
        let (signals, continuation) = AsyncStream<Int32>.makeStream()
        let handler = ShutdownSignalHandler { continuation.yield($0) }
        for await _ in signals { break }
        handler.cancel()
        await server.stop()
        return 0
    }

    private static func runScenario(_ parsed: CommandLineArguments) async throws -> Int32 {
        let path = parsed.positional[0]
        let (scenario, places) = try Scenario.loadWithPlaySteps(try Data(contentsOf: URL(fileURLWithPath: path)))
        let now = Timestamp(Date())
        let dataURL = URL(fileURLWithPath: parsed.value("--data") ?? "data/simulator")
        let data = try SimulatorDataDirectory.open(dataURL, now: now)
        let port = try UInt16(parsed.value("--port") ?? "0").orThrow(UsageError("--port must be a port number"))
        let playPort = try UInt16(parsed.value("--play-port") ?? "8091").orThrow(
            UsageError("--play-port must be a port number"))
        let target = parsed.value("--target")
        let report: ScenarioReport
        do {
            let simulator = try await ScenarioRunner.makeSimulator(
                for: scenario, authority: data.authority, start: now, notificationURL: target)
            var app = scenario.app
            app.apiKeys.append(data.appStoreConnectKey)
            if let target { app.notificationURL = target }
            try await simulator.addApp(app)
            // The target may call back (history, statuses) while the scenario runs.
            let server = try SimulatorServer(
                simulator: simulator, configuration: HTTPServer.Configuration(port: port), tickInterval: nil)
            print(
                "scenario \(scenario.name): simulator at \(server.baseURL.absoluteString)"
                    + (target.map { ", notifications to \($0)" } ?? ""))
            var play: ScenarioPlaySide?
            if places.contains(where: { if case .playStore = $0 { true } else { false } }) {
                play = try await ScenarioPlaySide.start(
                    scenario: scenario, appStore: simulator, data: dataURL, port: playPort,
                    target: parsed.value("--play-target"), audience: parsed.value("--play-audience") ?? "storekeeper",
                    packageName: parsed.value("--play-package") ?? "com.example.app",
                    publicKey: parsed.value("--public-key"))
            }
            let progress = ProgressReporter(label: "scenario", total: places.count)
            let interrupt = InterruptRequest()
            let runner = ScenarioRunner(simulator: simulator)
            var steps: [ScenarioStepReport] = []
            for (index, place) in places.enumerated() {
                if index > 0, interrupt.isRequested { break }
                let step: ScenarioStepReport
                switch place {
                case .appStore(let number):
                    step = await runner.run(scenario.steps[number], number: index + 1)
                    // The clock is shared: the Play simulator applies what time did too.
                    await play?.simulator.tick()
                case .playStore(let json):
                    // play is set whenever a step is a play_store one.
                    step = await play!.run(json, number: index + 1)
                }
                print(ScenarioRunner.line(step))
                progress.advance()
                steps.append(step)
            }
            report = ScenarioReport(name: scenario.name, steps: steps)
            interrupt.cancel()
            progress.finish(interrupted: report.steps.count < places.count)
            await play?.stop()
            await server.stop()
        }
        let failed = report.steps.filter { !$0.passed }.count
        print("\(report.steps.count - failed) passed, \(failed) failed")
        if report.steps.count < places.count {
            FileHandle.standardError.write(
                Data(
                    ("interrupted after step \(report.steps.count) of \(places.count); the simulator keeps its "
                        + "state in memory only, so run the scenario again from its start\n").utf8))
            return BackfillCommand.interruptedExitCode
        }
        return failed == 0 ? 0 : 1
    }
}

extension Optional {
    fileprivate func orThrow(_ error: @autoclosure () -> any Error) throws -> Wrapped {
        guard let value = self else { throw error() }
        return value
    }
}
