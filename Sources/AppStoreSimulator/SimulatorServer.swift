import AppStoreModels
import Foundation
import HTTPServer

/// Serves simulators over HTTP: each mounted at a path prefix ("" for the root, "/sandbox" for
/// the sandbox next to production), with the Server API, verifyReceipt and the admin API, and
/// a background task that ticks them (renewals, notification retries) every `tickInterval`.
/// - Note: Thread-safe; `stop()` may be called from any task.
public final class SimulatorServer: Sendable {
    public let server: HTTPServer
    public let mounts: [(prefix: String, simulator: AppStoreSimulator)]
    private let ticker: Task<Void, Never>?

    public init(
        mounts: [(prefix: String, simulator: AppStoreSimulator)],
        configuration: HTTPServer.Configuration = HTTPServer.Configuration(),
        tickInterval: Duration? = .milliseconds(200)
    ) throws {
        server = try HTTPServer(configuration: configuration, responder: Self.responder(mounts: mounts))
        self.mounts = mounts
        let simulators = mounts.map(\.simulator)
        if let tickInterval {
            ticker = Task.detached {
                while !Task.isCancelled {
                    for simulator in simulators { await simulator.tick() }
                    try? await Task.sleep(for: tickInterval)
                }
            }
        } else {
            ticker = nil
        }
    }

    /// The routes of the mounted simulators, usable in process without a server (tests).
    public static func responder(mounts: [(prefix: String, simulator: AppStoreSimulator)]) -> Responder {
        var router = Router()
        for (prefix, simulator) in mounts {
            ServerAPIRoutes.add(simulator, to: &router, prefix: prefix)
            VerifyReceiptRoutes.add(simulator, to: &router, prefix: prefix)
            AdminRoutes.add(simulator, to: &router, prefix: prefix)
        }
        return router.buildResponder()
    }

    /// One simulator at the root.
    public convenience init(
        simulator: AppStoreSimulator, configuration: HTTPServer.Configuration = HTTPServer.Configuration(),
        tickInterval: Duration? = .milliseconds(200)
    ) throws {
        try self.init(mounts: [("", simulator)], configuration: configuration, tickInterval: tickInterval)
    }

    public var port: UInt16 { server.port }
    public var baseURL: URL { server.baseURL }

    public func stop() async {
        ticker?.cancel()
        await server.stop()
    }
}
