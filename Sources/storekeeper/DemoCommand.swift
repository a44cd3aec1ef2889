import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPServer
import SecretSealing
import Storage
import StorekeeperIngestion
import StorekeeperServer

/// `storekeeper serve --demo` (what `make run` starts): the real server, its App Store played
/// by the embedded simulator, and a stream of simulated customers, all on loopback.
///
/// - Storekeeper listens where `listen` says (127.0.0.1:8080) on a SQLite file in the data
///   directory, `demo.sqlite`, recreated at every start: the simulator keeps its store in
///   memory, so a database from an earlier run would hold purchases no App Store knows.
/// - The simulator (sandbox, one month = `monthSeconds` of wall time) listens on a free
///   loopback port; its CA and In-App Purchase key live in `<data>/simulator` and are reused.
///   Storekeeper reaches it as it reaches Apple: through `AppStoreConnection` with the
///   simulator's base URL, the simulator's root as the app's trusted root and its key as the
///   app's App Store Connect key. The simulator sends notifications to Storekeeper's own
///   notification URL.
/// - Google Play is the Play simulator (`DemoPlayStore`) on the same clock and month, on a
///   free loopback port: Storekeeper reads purchases from it and it pushes notifications to
///   Storekeeper; every third demo customer buys on Google Play, so the dashboard shows both
///   stores.
/// - The demo app is created through the admin API; its keys are printed once. Its secrets are
///   sealed under the configured secrets key, or else `<data>/secrets.key` (created, mode 0600,
///   on first run).
/// - Ctrl-C (SIGINT) or SIGTERM: stop accepting, finish in-flight requests, stop the customers,
///   the webhook worker and the simulator, close the database, exit 0.
enum DemoCommand {
    struct Options: Sendable {
        var monthSeconds: Double = 120
        var arrivalInterval: Duration = .seconds(4)
        var progressInterval: Duration = .seconds(15)
    }

    static func run(_ base: ServerConfiguration, options: Options) async -> Int32 {
        do {
            return try await serve(base, options: options)
        } catch {
            FileHandle.standardError.write(Data("storekeeper demo: \(error)\n".utf8))
            return 1
        }
    }

    private static func serve(_ base: ServerConfiguration, options: Options) async throws -> Int32 {
        var configuration = base
        let adminKey = configuration.adminKey ?? APIKeys.generate(kind: .admin)
        configuration.adminKey = adminKey
        // The terminal is for the banner and the progress line; request logs only when asked.
        if ProcessInfo.processInfo.environment["STOREKEEPER_ACCESS_LOG"] == nil { configuration.accessLog = false }
        let dataDirectory = URL(fileURLWithPath: configuration.dataDirectory)
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let databasePath = dataDirectory.appendingPathComponent("demo.sqlite").path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: databasePath + suffix) }
        configuration.databaseURL = "sqlite:" + databasePath
        // The demo backend's webhook listener is on loopback, which the destination policy
        // refuses unless the server allows it.
        configuration.webhookAllowedDestinations = try WebhookDestinationAllowList(
            configuration.webhookAllowedDestinations.entries + [DemoWebhookCounter.host])

        let now = Timestamp(Date())
        let simulatorData = try SimulatorDataDirectory.open(
            dataDirectory.appendingPathComponent("simulator"), now: now)
        let scale = TimeScale.accelerated(monthSeconds: options.monthSeconds)
        let clock = RealTimeClock()
        let simulator = AppStoreSimulator(
            environment: .sandbox, authority: simulatorData.authority, clock: clock, scale: scale,
            transport: URLSessionNotificationTransport(timeout: 10))
        let simulatorServer = try SimulatorServer(
            simulator: simulator,
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0, threadPoolSize: 2),
            tickInterval: .milliseconds(250))
        let webhooks = try DemoWebhookCounter()
        let play = try DemoPlayStore(clock: clock, scale: scale)

        let secretsKey =
            try configuration.loadSecretsKey()
            ?? SecretsKeyFile.readOrCreate(dataDirectory.appendingPathComponent("secrets.key").path).key
        let store = try await StoreLocation(configuration.resolvedDatabaseURL).open(migrate: true)
        let application = StorekeeperApplication(
            configuration: configuration, store: store, secrets: StoredSecrets(sealer: SecretSealer(key: secretsKey)),
            playService: play.service)
        let server: HTTPServer
        do {
            server = try application.startServer()
        } catch {
            await store.close()
            await simulatorServer.stop()
            await play.stop()
            await webhooks.stop()
            throw DemoFailure(
                "cannot listen on \(configuration.listen) (\(error)); is another server running? "
                    + "Try: storekeeper serve --demo --listen 127.0.0.1:8081")
        }
        let workers = application.startWorkers()
        let baseURL = server.baseURL.absoluteString
        let client = DemoHTTPClient(baseURL: baseURL)

        var app = SimulatedApp.demo(keys: [simulatorData.appStoreConnectKey])
        app.notificationURL = baseURL + "/v1/apps/\(DemoAppSetup.appId)/notifications/appstore"
        let keys = try await DemoAppSetup(client: client, adminKey: adminKey).create(
            app: app, simulator: simulatorData, simulatorURL: simulatorServer.baseURL.absoluteString,
            webhookURL: webhooks.url)
        try await simulator.addApp(app)
        try await play.configure(client: client, adminKey: adminKey, storekeeperURL: baseURL)

        let registry = DemoRegistry()
        let stream = DemoCustomerStream(
            simulator: simulator, client: client, publicKey: keys.publicKey,
            products: DemoJourney.Products(bundleId: app.bundleId), arrivalInterval: options.arrivalInterval,
            registry: registry, play: play)
        let customers = Task { await stream.run() }
        // The curl examples name the first customer: show them once it exists.
        for _ in 0..<100 where !registry.hasPosted("user-0001") { try? await Task.sleep(for: .milliseconds(100)) }

        say(
            DemoBanner(
                baseURL: baseURL, simulatorURL: simulatorServer.baseURL.absoluteString, playURL: play.baseURL,
                simulatorDirectory: simulatorData.url.path, databasePath: databasePath, app: app, keys: keys,
                adminKey: adminKey, generatedAdminKey: base.adminKey == nil, options: options
            ).text)
        let progress = Task {
            await DemoProgress(
                store: store, client: client, publicKey: keys.publicKey, registry: registry, webhooks: webhooks,
                interval: options.progressInterval
            ).run()
        }

        await server.runUntilShutdownSignal()
        say("\nstopping: finishing in-flight requests, stopping the customers, the simulators and the webhook worker")
        customers.cancel()
        progress.cancel()
        await customers.value
        await progress.value
        await workers.stop()
        await simulatorServer.stop()
        await play.stop()
        await webhooks.stop()
        await store.close()
        say("stopped")
        return 0
    }

    /// One line on standard output, written at once (unbuffered: the demo is watched live).
    static func say(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
