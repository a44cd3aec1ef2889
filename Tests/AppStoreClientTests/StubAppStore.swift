import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Foundation
import HTTPServer
import StorekeeperTesting
import Synchronization

/// A request as the loopback stub received it.
struct RecordedRequest: Sendable {
    var method: String
    var path: String
    var query: String?
    var queryItems: [(name: String, value: String)]
    var headers: HTTPHeaders
    var body: Data

    func header(_ name: String) -> String? { headers[name] }
    var bodyJSON: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
}

/// One scripted answer of the stub.
struct StubReply: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: Data

    static func json(
        _ body: Data, status: Int = 200, contentType: String = "application/json", headers: [(String, String)] = []
    ) -> StubReply {
        StubReply(status: status, headers: [("Content-Type", contentType)] + headers, body: body)
    }

    static func corpus(
        _ file: String, status: Int = 200, contentType: String = "application/json", headers: [(String, String)] = []
    ) throws -> StubReply {
        .json(try Conformance.data("models/\(file)"), status: status, contentType: contentType, headers: headers)
    }

    static func empty(status: Int = 200) -> StubReply { StubReply(status: status, headers: [], body: Data()) }

    static func apiError(_ code: Int64, _ message: String, status: Int, headers: [(String, String)] = []) -> StubReply {
        .json(Data(#"{"errorCode":\#(code),"errorMessage":"\#(message)"}"#.utf8), status: status, headers: headers)
    }
}

/// A loopback App Store on `127.0.0.1:0` (our libmicrohttpd server): answers scripted replies in
/// order and records every request, so tests assert the wire format the real client produced.
final class StubAppStore: Sendable {
    /// The recorded requests and the replies still to give, shared with the server's handler.
    private final class Script: Sendable {
        let mutex: Mutex<(requests: [RecordedRequest], replies: [StubReply])>
        init(_ replies: [StubReply]) { mutex = Mutex(([], replies)) }
        func withLock<T>(_ body: (inout (requests: [RecordedRequest], replies: [StubReply])) -> T) -> T {
            mutex.withLock { body(&$0) }
        }
    }

    let server: HTTPServer
    private let state: Script

    init(_ replies: [StubReply] = []) throws {
        let state = Script(replies)
        self.state = state
        server = try HTTPServer(
            configuration: HTTPServer.Configuration(
                threadPoolSize: 2, connectionTimeout: .seconds(5), shutdownGracePeriod: .milliseconds(200))
        ) { request in
            let recorded = RecordedRequest(
                method: request.method.rawValue, path: request.path, query: request.query,
                queryItems: request.queryItems.map { ($0.name, $0.value ?? "") }, headers: request.headers,
                body: request.body)
            let reply: StubReply? = state.withLock { state in
                state.requests.append(recorded)
                return state.replies.isEmpty ? nil : state.replies.removeFirst()
            }
            guard let reply else { return HTTPResponse.text("no scripted reply", status: HTTPStatus(599)) }
            var headers = HTTPHeaders()
            for (name, value) in reply.headers { headers.add(name: name, value: value) }
            return HTTPResponse(status: HTTPStatus(reply.status), headers: headers, body: reply.body)
        }
    }

    var baseURL: URL { server.baseURL }
    var requests: [RecordedRequest] { state.withLock { $0.requests } }
    func enqueue(_ replies: StubReply...) { state.withLock { $0.replies.append(contentsOf: replies) } }

    func stop() async { await server.stop(gracePeriod: .milliseconds(100)) }
}

/// A retry clock that never sleeps: pauses are recorded and advance a virtual monotonic time.
final class VirtualRetryClock: RetryClock {
    private let state = Mutex<(now: Duration, sleeps: [Duration])>((.zero, []))
    let wall: Date

    init(wall: Date = Date(timeIntervalSince1970: 1_764_547_200)) { self.wall = wall }

    func monotonicNow() -> Duration { state.withLock { $0.now } }
    func wallNow() -> Date { wall.addingTimeInterval(state.withLock { $0.now }.components.seconds.asDouble) }
    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        state.withLock {
            $0.sleeps.append(duration)
            $0.now += duration
        }
    }

    var sleeps: [Duration] { state.withLock { $0.sleeps } }
}

extension Int64 {
    var asDouble: Double { Double(self) }
}

/// Shared fixtures: one API key, a client pointed at a stub, the token check.
enum ClientFixture {
    static let keyId = "KEYID12345"
    static let issuerId = "99b16628-15e4-4668-972b-eeff55eeff55"
    static let bundleId = "com.example"
    /// One key for the whole suite: generating P-256 keys per test is wasted time.
    static let key: PrivateKey = try! PrivateKey.generateP256()

    /// No jitter and tiny pauses, so expected pauses are exact.
    static func retry(maxAttempts: Int = 3, maxTotalTime: Duration = .seconds(60)) -> RetryPolicy {
        RetryPolicy(
            maxAttempts: maxAttempts, initialBackoff: .milliseconds(100), multiplier: 2, maxBackoff: .seconds(5),
            jitter: 0, maxTotalTime: maxTotalTime)
    }

    static func client(
        _ stub: StubAppStore, environment: AppStoreEnvironment = .sandbox, fallback: StubAppStore? = nil,
        retry: RetryPolicy = ClientFixture.retry(), clock: VirtualRetryClock = VirtualRetryClock(),
        transport: (any HTTPTransport)? = nil, maxConcurrentRequests: Int = 8
    ) throws -> AppStoreServerAPIClient {
        let configuration = try AppStoreServerAPIConfiguration(
            bundleId: bundleId, keyId: keyId, issuerId: issuerId, environment: environment, baseURL: stub.baseURL,
            sandboxFallbackBaseURL: fallback?.baseURL, retry: retry, maxConcurrentRequests: maxConcurrentRequests,
            requestTimeout: .seconds(5))
        return try AppStoreServerAPIClient(
            configuration: configuration, signingKey: key, transport: transport ?? URLSessionTransport(), clock: clock)
    }

    /// Verifies the bearer token the way Apple (and our simulator) does.
    static func verifyToken(_ request: RecordedRequest) throws -> AppStoreConnectClaims {
        guard let authorization = request.header("Authorization"), authorization.hasPrefix("Bearer ") else {
            throw FixtureError("missing bearer token")
        }
        let verifier = AppStoreConnectTokenVerifier(keys: [keyId: key.publicKey])
        let (kid, claims) = try verifier.verify(String(authorization.dropFirst(7)), now: Timestamp(Date()))
        guard kid == keyId, claims.iss == issuerId, claims.bid == bundleId else {
            throw FixtureError("wrong token claims")
        }
        return claims
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
