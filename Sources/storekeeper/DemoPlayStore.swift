import AppStoreSimulator
import Foundation
import GooglePlaySimulator
import GooglePlayTrust
import HTTPServer
import StorekeeperIngestion

/// The demo's Google Play: the Play simulator on a free loopback port (OAuth2 token endpoint,
/// Play Developer API, push key set), on the App Store simulator's clock with the same
/// accelerated month, pushing its real-time developer notifications to Storekeeper.
///
/// Storekeeper reaches it as it reaches Google (`playService`); the demo app's Play side is
/// set up through the admin API as an operator would: the package name, a service-account key
/// the simulator issued, and the audience and account of the push tokens.
/// - Note: Immutable and `Sendable`; the simulator is an actor.
struct DemoPlayStore: Sendable {
    static let packageName = "com.example.storekeeper.demo.android"
    static let audience = "storekeeper-demo"
    static let pushAccount = "play-push@simulator.iam.gserviceaccount.com"

    let simulator: PlaySimulator
    let server: HTTPServer
    let scale: TimeScale
    private let ticker: Task<Void, Never>

    init(clock: any SimulatorClock, scale: TimeScale) throws {
        self.scale = scale
        let simulator = try PlaySimulator(
            packageNames: [Self.packageName], clock: clock,
            push: .init(url: nil, audience: Self.audience, serviceAccountEmail: Self.pushAccount),
            gracePeriodMillis: scale.milliseconds(days: 3), holdPeriodMillis: scale.milliseconds(days: 30))
        self.simulator = simulator
        var router = Router()
        PlaySimulatorRoutes.add(simulator, to: &router)
        server = try HTTPServer(
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0, threadPoolSize: 2),
            responder: router.buildResponder())
        // Renewals, grace, hold and expiry follow the accelerated clock, as the App Store
        // simulator's ticks do.
        ticker = Task.detached {
            while !Task.isCancelled {
                await simulator.tick()
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    var baseURL: String { server.baseURL.absoluteString }

    /// How Storekeeper reaches this simulator instead of Google.
    var service: PlayServiceConfiguration {
        PlayServiceConfiguration(
            apiBaseURL: server.baseURL,
            keySet: GoogleKeySetCache(
                loader: PlayServiceConfiguration.keySetLoader(baseURL + "/oauth2/v3/certs")))
    }

    /// Sets up the demo app's Play side through the admin API and points the pushes at it.
    func configure(client: DemoHTTPClient, adminKey: String, storekeeperURL: String) async throws {
        let account = try await simulator.createServiceAccount(
            email: "storekeeper@demo.iam.gserviceaccount.com", tokenURI: server.baseURL.appendingPathComponent("token"))
        try await client.expect(
            200, "PUT", "/v1/admin/apps/\(DemoAppSetup.appId)/googleplay", key: adminKey,
            json: [
                "packageName": Self.packageName, "serviceAccountKey": String(decoding: account.json, as: UTF8.self),
                "rtdnAudience": Self.audience, "pushServiceAccountEmail": Self.pushAccount,
            ])
        await simulator.setPushURL(
            URL(string: storekeeperURL + "/v1/apps/\(DemoAppSetup.appId)/notifications/googleplay"))
    }

    func stop() async {
        ticker.cancel()
        await server.stop()
    }
}
