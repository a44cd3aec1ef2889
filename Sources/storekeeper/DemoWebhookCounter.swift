import Foundation
import HTTPServer
import Synchronization

/// The demo backend's webhook endpoint: a loopback listener that answers 200 and counts the
/// lifecycle events Storekeeper delivered to it, by type.
/// - Note: Thread-safe: the counts sit behind a `Mutex`.
final class DemoWebhookCounter: Sendable {
    let server: HTTPServer
    private let counts: Counts

    /// Counts shared with the request handler.
    private final class Counts: Sendable {
        let byType = Mutex<[String: Int]>([:])
    }

    /// Where the listener binds; the demo server allows webhooks to it.
    static let host = "127.0.0.1"

    init() throws {
        let counts = Counts()
        self.counts = counts
        // Synchronous: counting never waits, so the listener needs no task hop.
        server = try HTTPServer.synchronous(
            configuration: HTTPServer.Configuration(host: Self.host, port: 0, threadPoolSize: 1)
        ) { request in
            let object = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any]
            let type = object?["type"] as? String ?? "unknown"
            counts.byType.withLock { $0[type, default: 0] += 1 }
            return HTTPResponse(status: .ok)
        }
    }

    var url: String { server.baseURL.absoluteString + "/webhooks/storekeeper" }
    var delivered: Int { counts.byType.withLock { $0.values.reduce(0, +) } }

    func stop() async { await server.stop() }
}
