import Foundation
import HTTPServer
import Synchronization

/// A real HTTP endpoint on a loopback port that records every webhook Storekeeper delivers and
/// answers 200.
/// - Note: Thread-safe: the recorded deliveries sit behind a `Mutex`.
final class WebhookListener: Sendable {
    struct Delivery: Sendable {
        var headers: HTTPHeaders
        var body: Data

        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:] }
        var type: String? { json["type"] as? String }
        var appUserId: String? { (json["customer"] as? [String: Any])?["appUserId"] as? String }
    }

    let server: HTTPServer
    private let recorded: Recorded

    /// The deliveries, behind a lock the request handler shares.
    private final class Recorded: Sendable {
        let deliveries = Mutex<[Delivery]>([])
    }

    init() throws {
        let recorded = Recorded()
        self.recorded = recorded
        // Synchronous: recording a delivery never waits, so no task hop is needed.
        server = try HTTPServer.synchronous(
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0, threadPoolSize: 1)
        ) { request in
            recorded.deliveries.withLock { $0.append(Delivery(headers: request.headers, body: request.body)) }
            return HTTPResponse(status: .ok)
        }
    }

    var url: String { server.baseURL.absoluteString + "/storekeeper-webhooks" }
    var deliveries: [Delivery] { recorded.deliveries.withLock { $0 } }

    func stop() async { await server.stop() }
}
