import AppStoreSimulator
import Foundation
import GooglePlaySimulator
import HTTPServer

/// `storekeeper simulate play`: the Google Play simulator as a process: the OAuth2 token
/// endpoint, the Play Developer API purchase methods, the push key set and the admin API that
/// creates service accounts and purchases and runs their lifecycle (docs/cli.md).
enum SimulatePlayCommand {
    static let command = Command(
        name: "play",
        summary: "serve the Google Play simulator (token endpoint, Play Developer API, JWKS) until interrupted",
        options: [
            Option(name: "--port", valueName: "N", help: "the port", defaultValue: "8091"),
            Option(name: "--host", valueName: "H", help: "the address", defaultValue: "127.0.0.1"),
            Option(
                name: "--package", valueName: "NAME", help: "the simulated app's package name",
                defaultValue: "com.example.app"),
            Option(name: "--push-url", valueName: "URL", help: "where real-time developer notifications are pushed"),
            Option(
                name: "--push-audience", valueName: "AUD", help: "the audience of the push OIDC tokens",
                defaultValue: "storekeeper"),
        ],
        action: { try await serve($0) })

    private static func serve(_ parsed: CommandLineArguments) async throws -> Int32 {
        guard let port = UInt16(parsed.value("--port") ?? "8091") else {
            throw UsageError("--port must be a port number")
        }
        var pushURL: URL?
        if let text = parsed.value("--push-url") {
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
                throw UsageError("--push-url must be an http(s) URL")
            }
            pushURL = url
        }
        let packageName = parsed.value("--package") ?? "com.example.app"
        let simulator = try PlaySimulator(
            packageNames: [packageName], clock: RealTimeClock(),
            push: .init(url: pushURL, audience: parsed.value("--push-audience") ?? "storekeeper"))
        var router = Router()
        PlaySimulatorRoutes.add(simulator, to: &router)
        let server = try HTTPServer(
            configuration: HTTPServer.Configuration(host: parsed.value("--host") ?? "127.0.0.1", port: port),
            responder: router.buildResponder())
        // Renewals, expiries and the three-day refund of unacknowledged purchases follow the clock.
        let ticker = Task.detached {
            while !Task.isCancelled {
                await simulator.tick()
                try? await Task.sleep(for: .seconds(1))
            }
        }
        let base = server.baseURL.absoluteString
        print(
            """
            Google Play simulator listening on \(base)
              token endpoint: \(base)/token   push keys: \(base)/oauth2/v3/certs
              Play Developer API: \(base)/androidpublisher/v3/applications/\(packageName)/purchases/…
              admin API: \(base)/play-admin/… (service-accounts, subscriptions, products, tick)
            """)
        let (signals, continuation) = AsyncStream<Int32>.makeStream()
        let handler = ShutdownSignalHandler { continuation.yield($0) }
        for await _ in signals { break }
        handler.cancel()
        ticker.cancel()
        await server.stop()
        return 0
    }
}
