import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Malformed HTTP against the real application on a loopback port, over raw POSIX sockets:
/// bad request lines, oversized headers and bodies, slow clients, invalid JSON, wrong content
/// types and path traversal in ids. Each gets a 4xx (or, where libmicrohttpd cannot parse a
/// request far enough to answer, a closed connection), and after each the server still answers
/// `/healthz`: it neither crashed nor hung.
@Suite(.serialized) struct MalformedHTTPTests {
    /// `storekeeper serve` as configured by a user, with short timeouts so that slow clients are
    /// cut off within the test's time.
    final class LiveServer: Sendable {
        let server: HTTPServer
        let store: any Store
        let appId: String
        let publicKey: String
        private let cleanup: @Sendable () -> Void

        init() async throws {
            let (store, cleanup) = try await TestDatabase.sqlite.open()
            self.store = store
            self.cleanup = cleanup
            let configuration = ServerConfiguration(
                listen: "127.0.0.1:0", adminKey: ServerHarness.adminKey, maxBodySize: 64 * 1024,
                maxHeaderSize: 8 * 1024, connectionLimit: 64, connectionTimeoutSeconds: 2, threadPoolSize: 2,
                shutdownGraceSeconds: 2, accessLog: false, webhookWorker: false)
            let application = StorekeeperApplication(
                configuration: configuration, store: store, clock: ServerClock(now: { TestSigning.signedDate }),
                appStoreConnections: { _, _, _ in nil })
            let server = try HTTPServer(
                configuration: try application.httpConfiguration(), responder: application.responder)
            let appId = "app-\(uniqueDigits())"
            let admin = ServerHarness.adminKey
            let created = try await Self.exchange(
                server.port,
                Self.post(
                    "/v1/admin/apps", key: admin,
                    json: #"{"id":"\#(appId)","bundleId":"com.example","environments":["Sandbox"]}"#))
            precondition(created?.status == 201, "app creation failed")
            let key = try await Self.exchange(
                server.port, Self.post("/v1/admin/apps/\(appId)/keys", key: admin, json: #"{"kind":"public"}"#))
            let object = try JSONSerialization.jsonObject(with: key?.body ?? Data()) as? [String: Any]
            guard let publicKey = object?["key"] as? String else { preconditionFailure("key creation failed") }
            self.server = server
            self.appId = appId
            self.publicKey = publicKey
        }

        var port: UInt16 { server.port }

        func stop() async {
            await server.stop()
            await store.close()
            cleanup()
        }

        static func post(_ path: String, key: String, json: String, contentType: String = "application/json")
            -> String
        {
            "POST \(path) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(key)\r\nContent-Type: \(contentType)\r\n"
                + "Content-Length: \(json.utf8.count)\r\nConnection: close\r\n\r\n\(json)"
        }

        /// Sends `raw` on a new connection and reads one response.
        static func exchange(_ port: UInt16, _ raw: String, timeout: TimeInterval = 10) async throws -> RawReply? {
            try await exchange(port, Data(raw.utf8), timeout: timeout)
        }

        static func exchange(_ port: UInt16, _ raw: Data, timeout: TimeInterval = 10) async throws -> RawReply? {
            try await onOwnThread {
                let connection = try RawSocket(port: port)
                try? connection.send(raw)
                return connection.readReply(timeout: timeout)
            }
        }

        /// `GET /healthz` on a fresh connection answers 200 within a few seconds.
        func isHealthy() async throws -> Bool {
            try await Self.exchange(port, "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", timeout: 5)?
                .status == 200
        }
    }

    /// A reply to a raw request: status, head and body; `nil` when the server closed without one.
    struct RawReply: Sendable {
        let status: Int
        let head: String
        let body: Data

        var errorCode: String? {
            let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
            return (object?["error"] as? [String: Any])?["code"] as? String
        }
    }

    // MARK: Bad request lines

    /// Expected status, or nil where libmicrohttpd closes without answering.
    @Test(
        arguments: [
            ("GET /\r\n\r\n", 400),
            ("GET /healthz HTTP/1.1 extra\r\nHost: t\r\n\r\n", 400),
            ("GET /healthz HTTP/1.1\r\n\r\n", 400),
            ("GET /healthz HTTP/1.1\r\nHost: t\r\nBad Header Line\r\n\r\n", 400),
            ("GET /healthz HTTP/9.9\r\nHost: t\r\n\r\n", 505),
            ("GARBAGE\r\n\r\n", nil),
            ("\u{01}\u{02} \r\n\r\n", 400),
            ("GET healthz HTTP/1.1\r\nHost: t\r\n\r\n", 404),  // no leading slash: routes nothing
            ("POST /v1/admin/apps HTTP/1.1\r\nHost: t\r\nContent-Length: -5\r\n\r\n", 400),
            ("POST /v1/admin/apps HTTP/1.1\r\nHost: t\r\nContent-Length: many\r\n\r\n", 400),
        ] as [(String, Int?)])
    func badRequestLines(raw: String, expected: Int?) async throws {
        let live = try await LiveServer()
        let reply = try await LiveServer.exchange(live.port, raw, timeout: 5)
        if let expected {
            #expect(reply?.status == expected, "\(raw.debugDescription)")
        } else {
            #expect(reply == nil || (400..<500).contains(reply!.status), "\(raw.debugDescription)")
        }
        #expect(try await live.isHealthy())
        await live.stop()
    }

    @Test func unknownMethodsAndTargets() async throws {
        let live = try await LiveServer()
        for raw in [
            "BREW /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
            "DELETE /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
            "GET /v1/apps/x/customers/y?%zz=%%% HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        ] {
            let reply = try await LiveServer.exchange(live.port, raw)
            if let reply {
                #expect((400..<500).contains(reply.status), "\(raw.debugDescription) → \(reply.status)")
            }
            #expect(try await live.isHealthy())
        }
        await live.stop()
    }

    // MARK: Oversized headers and bodies

    @Test func oversizedHeadersAndTargets() async throws {
        let live = try await LiveServer()
        let filler = String(repeating: "v", count: 64 * 1024)
        let cases = [
            "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Filler: \(filler)\r\n\r\n",
            "GET /healthz?\(filler) HTTP/1.1\r\nHost: t\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nHost: t\r\n"
                + (0..<2000).map { "X-Many-\($0): value\r\n" }.joined() + "\r\n",
            "GET /v1/apps/\(filler)/customers/a HTTP/1.1\r\nHost: t\r\n\r\n",
        ]
        for raw in cases {
            let reply = try await LiveServer.exchange(live.port, raw, timeout: 5)
            let status = try #require(reply?.status, "no answer to an oversized request")
            #expect((400..<500).contains(status), "oversized request → \(status)")
            #expect(try await live.isHealthy())
        }
        await live.stop()
    }

    @Test func oversizedBodies() async throws {
        let live = try await LiveServer()
        let path = "/v1/apps/\(live.appId)/notifications/appstore"
        // Declared too large: refused before it is read.
        let declared = try await LiveServer.exchange(
            live.port,
            "POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n")
        #expect(declared?.status == 413)
        #expect(declared?.errorCode == "content_too_large")
        // Sent: 128 KiB of JSON against a 64 KiB limit.
        let json = #"{"signedPayload":""# + String(repeating: "a", count: 128 * 1024) + #""}"#
        let sent = try await LiveServer.exchange(
            live.port,
            "POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: \(json.utf8.count)"
                + "\r\nConnection: close\r\n\r\n\(json)")
        #expect(sent?.status == 413)
        // Chunked, never declaring a length.
        let chunked = try await onOwnThread { () -> RawReply? in
            let connection = try RawSocket(port: live.port)
            try connection.send(
                "POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            )
            let chunk = String(repeating: "z", count: 4096)
            for _ in 0..<40 { try? connection.send("1000\r\n\(chunk)\r\n") }
            try? connection.send("0\r\n\r\n")
            return connection.readReply(timeout: 5)
        }
        if let chunked { #expect(chunked.status == 413) }
        #expect(try await live.isHealthy())
        await live.stop()
    }

    // MARK: Slow clients

    @Test func slowClientsAreCutOffWhileOthersAreServed() async throws {
        let live = try await LiveServer()
        let port = live.port
        // Ten clients that trickle a request and never finish it, plus one idle connection.
        let started = Date()
        async let trickled: [Bool] = onOwnThread {
            let connections = try (0..<10).map { _ in try RawSocket(port: port) }
            for connection in connections { try? connection.send("POST /v1/admin/apps HTTP/1.1\r\nHost: t\r\n") }
            for _ in 0..<3 {
                Thread.sleep(forTimeInterval: 0.5)
                for connection in connections { try? connection.send("X-Slow: 1\r\n") }
            }
            return connections.map { $0.waitForClose(timeout: 8) }
        }
        async let idle: Bool = onOwnThread { try RawSocket(port: port).waitForClose(timeout: 8) }
        // Meanwhile the server answers everyone else.
        for _ in 0..<5 {
            #expect(try await live.isHealthy())
            try await Task.sleep(for: .milliseconds(200))
        }
        let closed = try await trickled
        #expect(closed.allSatisfy { $0 }, "slow clients were not cut off")
        #expect(try await idle)
        #expect(Date().timeIntervalSince(started) < 8)
        // A body announced and never sent.
        let stalled = try await onOwnThread { () -> Bool in
            let connection = try RawSocket(port: port)
            try connection.send(
                "POST /v1/admin/apps HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
            )
            return connection.waitForClose(timeout: 8)
        }
        #expect(stalled)
        #expect(try await live.isHealthy())
        await live.stop()
    }

    // MARK: Request smuggling and control characters in the target

    /// Both `Content-Length` and `Transfer-Encoding`, in either order: by one framing the body
    /// is `0\r\n\r\n` and a second request follows, by the other the second request is inside
    /// the body. Answered 400 and closed (RFC 9112 §6.1), the second request is never served.
    @Test(arguments: [
        "Content-Length: 5\r\nTransfer-Encoding: chunked", "Transfer-Encoding: chunked\r\nContent-Length: 5",
    ])
    func contentLengthWithTransferEncodingIsRefusedAndClosed(framing: String) async throws {
        let live = try await LiveServer()
        let raw =
            "POST /v1/admin/apps HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(ServerHarness.adminKey)\r\n"
            + "Content-Type: application/json\r\n\(framing)\r\n\r\n0\r\n\r\n"
            + "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
        let (data, closed) = try await onOwnThread { () -> (Data, Bool) in
            let connection = try RawSocket(port: live.port)
            try connection.send(raw)
            return connection.read(timeout: 5) { _ in false }  // everything until the server closes
        }
        let reply = RawSocket.parse(data)
        #expect(reply?.status == 400)
        #expect(reply?.errorCode == "invalid_framing")
        #expect(reply?.head.contains("Connection: close") == true)
        #expect(String(decoding: data, as: UTF8.self).components(separatedBy: "HTTP/1.1 ").count == 2)  // one answer
        #expect(closed)
        #expect(try await live.isHealthy())
        await live.stop()
    }

    /// A NUL in the target once cut it short (`…/customers/u1\0/../../admin/apps` served
    /// customer `u1`); every control character is refused with 400 and the connection closed.
    @Test func controlCharactersInTheTargetAreRefused() async throws {
        let live = try await LiveServer()
        let customer = "/v1/apps/\(live.appId)/customers/u1"
        let targets: [(prefix: String, byte: UInt8, suffix: String)] =
            [0x00, 0x01, 0x09, 0x1F, 0x7F].map { (customer, $0, "/../../admin/apps") } + [
                (customer + "?environment=", 0x00, "Sandbox"), ("/healthz?x=", 0x7F, ""),
            ]
        for (prefix, byte, suffix) in targets {
            var raw = Data("GET \(prefix)".utf8)
            raw.append(byte)
            raw.append(
                Data("\(suffix) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(live.publicKey)\r\n\r\n".utf8))
            let request = raw
            let (data, closed) = try await onOwnThread { () -> (Data, Bool) in
                let connection = try RawSocket(port: live.port)
                try connection.send(request)
                return connection.read(timeout: 5) { _ in false }
            }
            let reply = RawSocket.parse(data)
            #expect(reply?.status == 400, "byte \(byte) in \(prefix)")
            #expect(reply?.errorCode == "invalid_request_target", "byte \(byte) in \(prefix)")
            #expect(closed, "byte \(byte) in \(prefix)")
        }
        #expect(try await live.isHealthy())
        await live.stop()
    }

    // MARK: Invalid JSON and wrong content types

    @Test func invalidJSONBodies() async throws {
        let live = try await LiveServer()
        let path = "/v1/apps/\(live.appId)/customers/alice/transactions"
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let deepObject = String(repeating: #"{"a":"#, count: 20_000) + "1" + String(repeating: "}", count: 20_000)
        let bodies: [Data] = [
            Data("{nope".utf8), Data(#"{"signedTransaction": "x""#.utf8), Data("".utf8), Data("null".utf8),
            Data("[]".utf8), Data(#""just a string""#.utf8), Data(#"{"transactionId": 1e999999}"#.utf8),
            Data(#"{"transactionId": "\ud800"}"#.utf8), Data([0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D]),
            Data("{\"transactionId\": \"1\u{0}2\"}".utf8), Data(deep.utf8), Data(deepObject.utf8),
            Data(#"{"signedTransaction": "a.b.c"}"#.utf8), Data(#"{"transactionId": "12", "environment": 7}"#.utf8),
        ]
        for body in bodies {
            var request = Data(
                ("POST \(path) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(live.publicKey)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n")
                    .utf8)
            request.append(body)
            let reply = try await LiveServer.exchange(live.port, request)
            let status = try #require(reply?.status, "no answer to \(body.prefix(40))")
            #expect((400..<500).contains(status), "\(String(decoding: body.prefix(40), as: UTF8.self)) → \(status)")
            #expect(reply?.errorCode != nil)
            #expect(try await live.isHealthy())
        }
        await live.stop()
    }

    @Test func wrongContentTypes() async throws {
        let live = try await LiveServer()
        let json = #"{"signedTransaction":"a.b.c"}"#
        for contentType in [
            "text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "application/xml",
            "application/jsonp", "json", "",
        ] {
            let header = contentType.isEmpty ? "" : "Content-Type: \(contentType)\r\n"
            let raw =
                "POST /v1/apps/\(live.appId)/customers/alice/transactions HTTP/1.1\r\nHost: t\r\n"
                + "Authorization: Bearer \(live.publicKey)\r\n\(header)Content-Length: \(json.utf8.count)\r\n"
                + "Connection: close\r\n\r\n\(json)"
            let reply = try await LiveServer.exchange(live.port, raw)
            #expect(reply?.status == 415, "Content-Type \(contentType.debugDescription) → \(reply?.status ?? 0)")
            #expect(reply?.errorCode == "unsupported_media_type")
        }
        let notification = try await LiveServer.exchange(
            live.port,
            LiveServer.post(
                "/v1/apps/\(live.appId)/notifications/appstore", key: "", json: #"{"signedPayload":"x"}"#,
                contentType: "text/plain"))
        #expect(notification?.status == 415)
        #expect(try await live.isHealthy())
        await live.stop()
    }

    // MARK: Path traversal in ids

    @Test func pathTraversalInIds() async throws {
        let live = try await LiveServer()
        let app = live.appId
        for target in [
            "/v1/apps/\(app)/customers/..%2F..%2Fetc%2Fpasswd", "/v1/apps/\(app)/customers/%2e%2e",
            "/v1/apps/\(app)/customers/..", "/v1/apps/..%2F\(app)/customers/a", "/v1/apps/\(app)/customers/a%00b",
            "/v1/apps/\(app)/customers/a%2Fb", "/v1/apps/\(app)/customers/%2e%2e%2f%2e%2e", "/../../etc/passwd",
            "/v1/apps/\(app)/../../healthz/customers/a", "/v1/apps/\(app)/customers/%C0%AE%C0%AE",
            "/v1/apps/\(app)/customers/%ZZ", "/v1/apps/\(app)/customers/a%0D%0AX-Injected:%201",
            "/v1/admin/apps/..%2F..%2Fkeys", "/v1/apps/\(app)/webhooks/..%2F..%2Fcatalog",
        ] {
            let reply = try await LiveServer.exchange(
                live.port,
                "GET \(target) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(live.publicKey)\r\nConnection: close\r\n\r\n"
            )
            let status = try #require(reply?.status, "no answer to \(target)")
            #expect((400..<500).contains(status), "\(target) → \(status)")
            #expect(reply?.errorCode != nil, "\(target)")
            #expect(reply?.head.lowercased().contains("x-injected") == false)
        }
        #expect(try await live.isHealthy())
        await live.stop()
    }
}

// MARK: Raw sockets

/// Runs blocking socket work on a thread of its own, never on the cooperative pool that also
/// runs the server's handlers.
private func onOwnThread<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result(catching: work)) }.start()
    }
}

private struct RawSocketError: Error, CustomStringConvertible {
    let description: String
}

/// A blocking TCP client to 127.0.0.1 for what URLSession will not send.
/// - Note: Not thread-safe; used from one thread at a time.
// @unchecked Sendable is safe: every test uses a socket from the one thread that made it.
private final class RawSocket: @unchecked Sendable {
    let fd: Int32

    init(port: UInt16) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RawSocketError(description: "socket failed") }
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
            close(descriptor)
            throw RawSocketError(description: "connect failed")
        }
        fd = descriptor
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try send(Data(text.utf8)) }

    func send(_ data: Data) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let sent = Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { throw RawSocketError(description: "send failed") }
                offset += sent
            }
        }
    }

    /// Reads until `done` says the bytes are complete, the peer closes, or `timeout` passes.
    func read(timeout: TimeInterval, done: (Data) -> Bool) -> (data: Data, closed: Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return (data, false) }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, Int32(remaining * 1000) + 1) <= 0 { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return (data, true) }
            data.append(buffer, count: count)
            if done(data) { return (data, false) }
        }
    }

    /// One response (head and `Content-Length` body), or nil if none came.
    func readReply(timeout: TimeInterval) -> MalformedHTTPTests.RawReply? {
        Self.parse(read(timeout: timeout) { Self.parse($0) != nil }.data)
    }

    /// Whether the server closes the connection within `timeout`.
    func waitForClose(timeout: TimeInterval) -> Bool {
        read(timeout: timeout) { _ in false }.closed
    }

    static func parse(_ data: Data) -> MalformedHTTPTests.RawReply? {
        guard let end = data.firstRange(of: Data("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let parts = (lines.first ?? "").split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        var length = 0
        for line in lines.dropFirst() {
            let pieces = line.split(separator: ":", maxSplits: 1)
            if pieces.count == 2, pieces[0].lowercased() == "content-length" {
                length = Int(pieces[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        let start = end.upperBound
        guard data.count - start >= length else { return nil }
        return MalformedHTTPTests.RawReply(status: status, head: head, body: Data(data[start..<(start + length)]))
    }
}
