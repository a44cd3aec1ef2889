import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Dispatch
import Foundation
import HTTPServer

/// `storekeeper simulate …`: the App Store simulator as a process.
///
/// - `serve [--port N] [--host H] [--data DIR] [--month-seconds N] [--app FILE] [--notification-url URL]`
///   serves production at `/` and sandbox at `/sandbox` (Server API, verifyReceipt, admin API
///   under `/simulator/v1`) until interrupted. The CA and an API key live in `DIR`.
/// - `run SCENARIO [--target URL] [--data DIR] [--port N]` runs a scenario file against an
///   embedded simulator whose notifications go to `--target`; exit 0 when every expectation held.
enum SimulateCommands {
    static let usage = """
        usage: storekeeper simulate serve [--port N] [--host H] [--data DIR] [--month-seconds N] [--app FILE]
                                          [--notification-url URL]
               storekeeper simulate run SCENARIO [--target URL] [--data DIR] [--port N]
        """

    static func run(_ arguments: [String]) -> Int32 {
        do {
            guard let command = arguments.first else { throw UsageError(usage) }
            let parsed = try CommandLineArguments(arguments.dropFirst(), switches: ["--help"])
            switch command {
            case "serve": return try serve(parsed)
            case "run": return try runScenario(parsed)
            default: throw UsageError(usage)
            }
        } catch let error as UsageError {
            FileHandle.standardError.write(Data((error.message + "\n").utf8))
            return 2
        } catch let error as SimulatorError {
            FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
            return 1
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            return 1
        }
    }

    private static func serve(_ parsed: CommandLineArguments) throws -> Int32 {
        try parsed.allowOnly(["--port", "--host", "--data", "--month-seconds", "--app", "--notification-url"])
        let port = try UInt16(parsed.value("--port") ?? "8090").orThrow(UsageError("--port must be a port number"))
        let monthSeconds = try parsed.value("--month-seconds").map {
            try Double($0).orThrow(UsageError("--month-seconds must be a number"))
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
        let server = try blocking { () async throws -> SimulatorServer in
            var mounts: [(prefix: String, simulator: AppStoreSimulator)] = []
            for (prefix, environment) in [("", AppStoreEnvironment.production), ("/sandbox", .sandbox)] {
                let simulator = AppStoreSimulator(environment: environment, authority: data.authority, scale: scale)
                try await simulator.addApp(configuredApp)
                mounts.append((prefix, simulator))
            }
            return try SimulatorServer(
                mounts: mounts,
                configuration: HTTPServer.Configuration(host: parsed.value("--host") ?? "127.0.0.1", port: port))
        }
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
        let stop = DispatchSemaphore(value: 0)
        let signals = [SIGINT, SIGTERM].map { signalNumber -> any DispatchSourceSignal in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber)
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        stop.wait()
        signals.forEach { $0.cancel() }
        try blocking { await server.stop() }
        return 0
    }

    private static func runScenario(_ parsed: CommandLineArguments) throws -> Int32 {
        try parsed.allowOnly(["--target", "--data", "--port"])
        guard let path = parsed.positional.first else { throw UsageError(usage) }
        let scenario = try Scenario.load(try Data(contentsOf: URL(fileURLWithPath: path)))
        let now = Timestamp(Date())
        let data = try SimulatorDataDirectory.open(
            URL(fileURLWithPath: parsed.value("--data") ?? "data/simulator"), now: now)
        let port = try UInt16(parsed.value("--port") ?? "0").orThrow(UsageError("--port must be a port number"))
        let target = parsed.value("--target")
        let report = try blocking { () async throws -> ScenarioReport in
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
            let report = await ScenarioRunner(simulator: simulator).run(scenario) { print($0) }
            await server.stop()
            return report
        }
        let failed = report.steps.filter { !$0.passed }.count
        print("\(report.steps.count - failed) passed, \(failed) failed")
        return failed == 0 ? 0 : 1
    }

    /// Runs async work from the synchronous CLI entry point.
    private static func blocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do { box.set(.success(try await work())) } catch { box.set(.failure(error)) }
            done.signal()
        }
        done.wait()
        return try box.get()
    }
}

/// Carries a result from a detached task to the waiting CLI thread.
/// - Note: `@unchecked Sendable` is safe: written once before the semaphore is signalled and
///   read only after `wait()` returns, so the semaphore orders the two accesses.
private final class ResultBox<T>: @unchecked Sendable {
    private var result: Result<T, any Error>?
    func set(_ value: Result<T, any Error>) { result = value }
    func get() throws -> T {
        guard let result else { throw UsageError("no result") }
        return try result.get()
    }
}

extension Optional {
    fileprivate func orThrow(_ error: @autoclosure () -> any Error) throws -> Wrapped {
        guard let value = self else { throw error() }
        return value
    }
}
