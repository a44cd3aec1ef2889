import AppStoreClient
import Foundation
import StorekeeperServer
import StorekeeperTesting
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A resolver whose answers the test sets (an empty answer: the name does not exist); other
/// names go to the system's resolver.
final class FixedResolver: HostResolver {
    private let answers = Mutex<[String: [IPAddress]]>([:])
    private let system = SystemHostResolver()

    func set(_ host: String, _ addresses: [String]) {
        let parsed = addresses.map { IPAddress($0)! }
        answers.withLock { $0[host] = parsed }
    }

    func resolve(_ host: String) async throws(HostResolutionFailure) -> [IPAddress] {
        if let answer = answers.withLock({ $0[host] }) {
            guard !answer.isEmpty else { throw .notFound }
            return answer
        }
        return try await system.resolve(host)
    }
}

/// Records every request, then sends it with another transport.
final class RecordingTransport: HTTPTransport {
    let inner: any HTTPTransport
    let sent = Mutex<[HTTPTransportRequest]>([])

    init(_ inner: any HTTPTransport = PinnedHTTPTransport()) { self.inner = inner }

    func send(_ request: HTTPTransportRequest, maximumResponseBytes: Int) async throws(HTTPTransportFailure)
        -> HTTPTransportResponse
    {
        sent.withLock { $0.append(request) }
        return try await inner.send(request, maximumResponseBytes: maximumResponseBytes)
    }

    var urls: [String] { sent.withLock { $0.map(\.url.absoluteString) } }
    /// The checked address each request was to connect to.
    var connectAddresses: [String?] { sent.withLock { $0.map(\.connectAddress) } }
}

/// Requests to `gatedHost` wait until `open()`; others answer 200 at once. Records how many
/// requests were in flight per host at most, and every request's start and end in order.
final class GatedTransport: HTTPTransport {
    struct State {
        var open = false
        var inFlight: [String: Int] = [:]
        var maximumInFlight: [String: Int] = [:]
        /// `start <host> <event id>` / `end <host> <event id>`, in order.
        var log: [String] = []
        /// The same event to the same host in flight twice at once.
        var duplicates = 0
        var active: Set<String> = []
    }

    let gatedHost: String
    let state = Mutex(State())

    init(gatedHost: String) { self.gatedHost = gatedHost }

    func open() { state.withLock { $0.open = true } }

    func send(_ request: HTTPTransportRequest, maximumResponseBytes: Int) async throws(HTTPTransportFailure)
        -> HTTPTransportResponse
    {
        let host = request.url.host ?? "?"
        let key = "\(host) \(request.header("Storekeeper-Event-Id") ?? "?")"
        state.withLock { state in
            state.inFlight[host, default: 0] += 1
            state.maximumInFlight[host] = max(state.maximumInFlight[host, default: 0], state.inFlight[host]!)
            state.log.append("start \(key)")
            if !state.active.insert(key).inserted { state.duplicates += 1 }
        }
        defer {
            state.withLock { state in
                state.inFlight[host, default: 0] -= 1
                state.log.append("end \(key)")
                state.active.remove(key)
            }
        }
        while host == gatedHost && !state.withLock({ $0.open }) {
            do {
                try await Task.sleep(for: .milliseconds(5))
            } catch {
                throw HTTPTransportFailure(.cancelled, "cancelled")
            }
        }
        return HTTPTransportResponse(status: 200)
    }

    func started(host: String) -> [String] {
        state.withLock { $0.log.filter { $0.hasPrefix("start \(host) ") }.map { String($0.split(separator: " ")[2]) } }
    }
}

/// A TCP port on 127.0.0.1 that completes connections in the kernel and never answers: an
/// endpoint that hangs. `close()` resets what waits.
final class HangingListener: Sendable {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard descriptor >= 0, bound == 0, listen(descriptor, 64) == 0 else {
            throw POSIXError(.EADDRINUSE)
        }
        self.descriptor = descriptor
        port = try Self.port(of: descriptor)
    }

    var url: String { "http://127.0.0.1:\(port)/hang" }

    func close() { _ = Glibc.close(descriptor) }

    static func port(of descriptor: Int32) throws -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw POSIXError(.EINVAL) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A loopback port nothing listens on (bound, then closed): connecting is refused.
    static func closedPort() throws -> Int {
        let listener = try HangingListener()
        listener.close()
        return listener.port
    }
}

/// A test's setup went wrong; says what.
struct WebhookTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension ServerHarness {
    /// Posts a new monthly subscription for `appUserId`: committed (with its outbox rows) when
    /// this returns.
    func purchase(_ app: AppKeys, appUserId: String) async throws {
        let signer = AppStoreSigner(ca: ca)
        let t0 = TestSigning.signedDate
        let id = uniqueDigits()
        let posted = try await request(
            "POST", "/v1/apps/\(app.appId)/customers/\(appUserId)/transactions", key: app.publicKey,
            json: [
                "signedTransaction": try signer.transaction(
                    id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0)
            ])
        guard posted.status == 200 else { throw WebhookTestFailure("purchase failed: \(posted.text)") }
    }

    /// Registers a webhook endpoint through the API; its id.
    func addEndpoint(_ app: AppKeys, url: String) async throws -> String {
        let created = try await request(
            "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": url])
        guard created.status == 201, let id = created.json["id"] as? String else {
            throw WebhookTestFailure("endpoint refused: \(created.text)")
        }
        return id
    }

    /// `lastError` of the app's failed deliveries, by endpoint id.
    func failedErrors(_ app: AppKeys) async throws -> [String: String] {
        let failed = try await request("GET", "/v1/apps/\(app.appId)/webhooks/deliveries/failed", key: app.secretKey)
        var errors: [String: String] = [:]
        for delivery in failed.json["deliveries"] as? [[String: Any]] ?? [] {
            errors[delivery["endpointId"] as? String ?? "?"] = delivery["lastError"] as? String ?? "(none)"
        }
        return errors
    }
}
