import Foundation
import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Server configuration for tests: loopback, ephemeral port, small limits where useful.
func testConfiguration(
    maxBodySize: Int = 1 << 20,
    connectionTimeout: Duration? = .seconds(5),
    shutdownGracePeriod: Duration = .seconds(5),
    accessLog: AccessLogger? = nil
) -> HTTPServer.Configuration {
    HTTPServer.Configuration(
        host: "127.0.0.1", port: 0, threadPoolSize: 2, maxBodySize: maxBodySize,
        connectionTimeout: connectionTimeout, shutdownGracePeriod: shutdownGracePeriod,
        accessLog: accessLog)
}

/// Starts a server, runs `body`, and always stops it; then checks that every per-request
/// context was released.
func withServer<Result>(
    _ configuration: HTTPServer.Configuration = testConfiguration(),
    responder: Responder,
    _ body: (HTTPServer) async throws -> Result
) async throws -> Result {
    let server = try HTTPServer(configuration: configuration, responder: responder)
    do {
        let result = try await body(server)
        await server.stop()
        precondition(server.inFlightRequestCount == 0, "request contexts leaked")
        return result
    } catch {
        await server.stop()
        throw error
    }
}

/// A URLSession that never reuses state between tests.
let testSession: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 20
    configuration.httpMaximumConnectionsPerHost = 16
    return URLSession(configuration: configuration)
}()

struct TestResponse {
    let status: Int
    let headers: [String: String]
    let body: Data

    var text: String { String(decoding: body, as: UTF8.self) }

    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The `{"error":{"code","message"}}` body, if it has that shape.
    var errorCode: String? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let error = object["error"] as? [String: Any], error.count == 2,
            error["message"] is String
        else { return nil }
        return error["code"] as? String
    }
}

func fetch(
    _ server: HTTPServer, _ path: String, method: String = "GET", headers: [String: String] = [:],
    body: Data? = nil
) async throws -> TestResponse {
    var request = URLRequest(url: URL(string: server.baseURL.absoluteString + path)!)
    request.httpMethod = method
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    request.httpBody = body
    let (data, response) = try await testSession.data(for: request)
    let http = response as! HTTPURLResponse
    var fields: [String: String] = [:]
    for (key, value) in http.allHeaderFields {
        fields["\(key)"] = "\(value)"
    }
    return TestResponse(status: http.statusCode, headers: fields, body: data)
}

/// Runs blocking work on a thread of its own so the cooperative pool (which also runs the
/// server's handlers) is never blocked by a test's socket I/O.
func onThread<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Swift.Result(catching: work)) }.start()
    }
}

struct SocketError: Error, CustomStringConvertible {
    let description: String
}

/// A raw TCP client for what URLSession will not send: malformed and trickled requests.
/// Blocking; use only inside `onThread`.
// @unchecked Sendable is safe here: each test uses a connection from one thread at a time
// (handing it between `onThread` calls that run one after another).
final class RawConnection: @unchecked Sendable {
    let fd: Int32
    /// Bytes received but not yet returned: one `recv` can carry more than one response (a
    /// client that reads late gets pipelined answers together), and what follows the response
    /// `readResponse` returns belongs to the next call.
    private var unread = Data()

    init(port: UInt16) throws {
        // Everything that can fail happens before `self.fd` is set: a class whose init throws
        // after full initialization still runs deinit, which would close the descriptor twice
        // (and possibly someone else's, reused meanwhile).
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError(description: "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw SocketError(description: "connect failed: errno \(code)")
        }
        fd = descriptor
    }

    deinit {
        close(fd)
    }

    func send(_ text: String) throws {
        try send(Data(text.utf8))
    }

    func send(_ data: Data) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let sent = Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { throw SocketError(description: "send failed: errno \(errno)") }
                offset += sent
            }
        }
    }

    /// Reads whatever arrives within `timeout` (after any bytes a `readResponse` left unread);
    /// `closed` tells whether the peer closed.
    func read(until deadline: Date, stop: (Data) -> Bool = { _ in false }) -> (data: Data, closed: Bool) {
        var data = unread
        unread = Data()
        if !data.isEmpty, stop(data) { return (data, false) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return (data, false) }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(remaining * 1000) + 1)
            if ready <= 0 { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return (data, true) }
            data.append(buffer, count: count)
            if stop(data) { return (data, false) }
        }
    }

    /// Reads one response with a `Content-Length` body (or until close); bytes after it are kept
    /// for the next read.
    func readResponse(timeout: TimeInterval = 10) -> RawResponse? {
        let (data, _) = read(until: Date().addingTimeInterval(timeout)) { RawResponse.parse($0) != nil }
        guard let response = RawResponse.parse(data) else {
            unread = data
            return nil
        }
        unread = Data(data.dropFirst(response.size))
        return response
    }
}

struct RawResponse {
    let status: Int
    let head: String
    let body: Data
    /// Bytes the response took: head, blank line and body.
    let size: Int

    static func parse(_ data: Data) -> RawResponse? {
        guard let end = data.firstRange(of: Data("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self)
        let statusLine = head.split(separator: "\r\n").first ?? ""
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        var length = 0
        for line in head.split(separator: "\r\n").dropFirst() {
            let pieces = line.split(separator: ":", maxSplits: 1)
            if pieces.count == 2, pieces[0].lowercased() == "content-length" {
                length = Int(pieces[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        let bodyStart = end.upperBound
        guard data.count - bodyStart >= length else { return nil }
        return RawResponse(
            status: status, head: head, body: Data(data[bodyStart..<(bodyStart + length)]), size: bodyStart + length)
    }

    func header(_ name: String) -> String? {
        for line in head.split(separator: "\r\n").dropFirst() {
            let pieces = line.split(separator: ":", maxSplits: 1)
            if pieces.count == 2, pieces[0].lowercased() == name.lowercased() {
                return pieces[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}

/// The router most tests use.
func makeTestRouter(accessLog: AccessLogger? = nil) -> Router {
    var router = Router(accessLog: accessLog)
    router.get("/health") { _, _ in .text("ok") }
    router.get("/v1/apps/{appID}/customers/{customerID}") { request, context in
        let appID = try context.parameter("appID")
        let customerID = try context.parameter("customerID")
        let tags = request.queryValues("tag").joined(separator: ",")
        return .text("app=\(appID) customer=\(customerID) tags=\(tags)")
    }
    router.get("/v1/apps/{appID}/customers/me") { _, _ in .text("literal wins") }
    router.post("/echo") { request, _ in
        HTTPResponse(status: .ok, headers: ["Content-Type": "application/octet-stream"], body: request.body)
    }
    router.get("/files/{name}") { _, context in .text("file=\(try context.parameter("name"))") }
    router.get("/peer") { request, _ in .text(request.remoteAddress ?? "-") }
    router.get("/sleep/{milliseconds}") { _, context in
        let milliseconds = Int(try context.parameter("milliseconds")) ?? 0
        try? await Task.sleep(for: .milliseconds(milliseconds))
        return .text("slept \(milliseconds)")
    }
    router.get("/fail/http") { _, _ in
        throw HTTPError(status: .conflict, code: "already_exists", message: "The thing exists.")
    }
    router.get("/fail/other") { _, _ in
        struct Secret: Error { let token = "s3cr3t" }
        throw Secret()
    }
    return router
}
