import Foundation
import Testing

@testable import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real server on 127.0.0.1, port 0, spoken to over loopback.
@Suite struct HTTPServerTests {
    let responder = makeTestRouter().buildResponder()

    @Test func bindsAnEphemeralPortAndRoutesWithParameters() async throws {
        try await withServer(responder: responder) { server in
            #expect(server.port != 0)
            let response = try await fetch(server, "/v1/apps/my%20app/customers/42?tag=x&tag=y")
            #expect(response.status == 200)
            #expect(response.text == "app=my app customer=42 tags=x,y")
            #expect(response.header("X-Request-Id").map(RequestID.isValid) == true)
            let peer = try await fetch(server, "/peer")
            #expect(peer.text.hasPrefix("127.0.0.1:"))
        }
    }

    @Test func notFoundAndMethodNotAllowedAreJSON() async throws {
        try await withServer(responder: responder) { server in
            let missing = try await fetch(server, "/does/not/exist")
            #expect(missing.status == 404)
            #expect(missing.errorCode == "not_found")
            #expect(missing.header("Content-Type") == "application/json")
            #expect(missing.header("X-Request-Id") != nil)

            let wrong = try await fetch(server, "/health", method: "POST", body: Data("x".utf8))
            #expect(wrong.status == 405)
            #expect(wrong.errorCode == "method_not_allowed")
            #expect(wrong.header("Allow") == "GET, HEAD")
        }
    }

    @Test func handlerErrorsUseTheErrorShape() async throws {
        try await withServer(responder: responder) { server in
            let conflict = try await fetch(server, "/fail/http")
            #expect(conflict.status == 409)
            #expect(conflict.errorCode == "already_exists")
            let other = try await fetch(server, "/fail/other")
            #expect(other.status == 500)
            #expect(other.errorCode == "internal_error")
            #expect(!other.text.contains("s3cr3t"))
        }
    }

    @Test func requestIDIsEchoedOrGenerated() async throws {
        try await withServer(responder: responder) { server in
            let echoed = try await fetch(server, "/health", headers: ["X-Request-Id": "client-id.42"])
            #expect(echoed.header("X-Request-Id") == "client-id.42")
            let replaced = try await fetch(
                server, "/health", headers: ["X-Request-Id": String(repeating: "a", count: 200)])
            let id = try #require(replaced.header("X-Request-Id"))
            #expect(id.count == 36 && RequestID.isValid(id))
            let first = try await fetch(server, "/health")
            let second = try await fetch(server, "/health")
            #expect(first.header("X-Request-Id") != second.header("X-Request-Id"))
        }
    }

    @Test func postBodyRoundTrips() async throws {
        try await withServer(responder: responder) { server in
            let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let response = try await fetch(server, "/echo", method: "POST", body: payload)
            #expect(response.status == 200)
            #expect(response.body == payload)
        }
    }

    @Test func pathTraversalParameterIs400() async throws {
        try await withServer(responder: responder) { server in
            for path in ["/files/%2e%2e", "/files/..%2F..%2Fetc%2Fpasswd", "/files/a%2Fb", "/files/%00x"] {
                let response = try await onThread {
                    let connection = try RawConnection(port: server.port)
                    try connection.send("GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
                    return connection.readResponse()
                }
                #expect(response?.status == 400, "\(path)")
                let body = response.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
                #expect(body.contains("invalid_path_parameter"), "\(path)")
            }
            let fine = try await fetch(server, "/files/report.txt")
            #expect(fine.text == "file=report.txt")
        }
    }

    @Test func keepAliveServesSeveralRequestsOnOneConnection() async throws {
        try await withServer(responder: responder) { server in
            let statuses = try await onThread { () -> [Int] in
                let connection = try RawConnection(port: server.port)
                var statuses: [Int] = []
                for index in 0..<3 {
                    try connection.send("GET /files/f\(index) HTTP/1.1\r\nHost: t\r\n\r\n")
                    guard let response = connection.readResponse() else { break }
                    guard String(decoding: response.body, as: UTF8.self) == "file=f\(index)" else { break }
                    statuses.append(response.status)
                }
                return statuses
            }
            #expect(statuses == [200, 200, 200])
        }
    }

    /// Two requests in one write, each answered by an async handler (the connection is
    /// suspended and resumed for each), read as they come.
    @Test func pipelinedRequestsAreAnswered() async throws {
        try await withServer(responder: responder) { server in
            let statuses = try await onThread { () -> [Int] in
                let connection = try RawConnection(port: server.port)
                try connection.send(
                    "GET /files/p1 HTTP/1.1\r\nHost: t\r\n\r\nGET /files/p2 HTTP/1.1\r\nHost: t\r\n\r\n")
                var statuses: [Int] = []
                for _ in 0..<2 {
                    guard let response = connection.readResponse() else { break }
                    statuses.append(response.status)
                }
                return statuses
            }
            #expect(statuses == [200, 200])
        }
    }

    /// Pipelined requests whose handlers take different times (async ones that finish at once
    /// or after a delay, the immediate 404), read only once all the answers can be there, so
    /// that one read carries several responses (a client that dropped what followed the first
    /// response saw the rest "stall" until the connection timeout): each is answered once, in
    /// order.
    @Test func pipelinedResponsesReadTogetherStayInOrder() async throws {
        let paths = ["/files/a", "/sleep/40", "/does/not/exist", "/files/b", "/sleep/0", "/health"]
        try await withServer(responder: responder) { server in
            let responses = try await onThread { () -> [RawResponse] in
                let connection = try RawConnection(port: server.port)
                try connection.send(paths.map { "GET \($0) HTTP/1.1\r\nHost: t\r\n\r\n" }.joined())
                Thread.sleep(forTimeInterval: 0.3)
                var responses: [RawResponse] = []
                for _ in paths {
                    guard let response = connection.readResponse(timeout: 5) else { break }
                    responses.append(response)
                }
                return responses
            }
            #expect(responses.map(\.status) == [200, 200, 404, 200, 200, 200])
            let bodies = responses.map { response in
                let text = String(decoding: response.body, as: UTF8.self)
                return response.status == 404 && text.contains("\"not_found\"") ? "not_found" : text
            }
            #expect(bodies == ["file=a", "slept 40", "not_found", "file=b", "slept 0", "ok"])
        }
    }

    @Test func concurrentRequestsAreAllAnswered() async throws {
        try await withServer(responder: responder) { server in
            let answered = try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var good = 0
                        for index in 0..<25 {
                            let response = try await fetch(server, "/files/w\(worker)-\(index)")
                            if response.status == 200, response.text == "file=w\(worker)-\(index)" { good += 1 }
                        }
                        return good
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(answered == 200)
        }
    }

    @Test func slowAsyncHandlersDoNotBlockOthers() async throws {
        try await withServer(responder: responder) { server in
            // More slow requests than worker threads (2): suspension keeps the workers free, so
            // a quick request is answered while all the slow ones are still in their handlers.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        let response = try await fetch(server, "/sleep/1200")
                        #expect(response.status == 200)
                    }
                }
                group.addTask {
                    for _ in 0..<200 where server.inFlightRequestCount < 6 {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                    let quick = try await fetch(server, "/health")
                    #expect(quick.status == 200)
                    #expect(server.inFlightRequestCount >= 6)
                }
                try await group.waitForAll()
            }
        }
    }

    @Test func handlerLongerThanConnectionTimeoutIsStillAnswered() async throws {
        try await withServer(testConfiguration(connectionTimeout: .seconds(1)), responder: responder) { server in
            let response = try await fetch(server, "/sleep/1500")
            #expect(response.status == 200)
            #expect(response.text == "slept 1500")
        }
    }

    @Test func synchronousHandlerVariant() async throws {
        let server = try HTTPServer.synchronous(configuration: testConfiguration()) { request in
            let context = withUnsafeCurrentTask { $0 == nil ? "no task" : "task" }
            return .text("sync \(request.method) \(request.path) \(request.queryValue("q") ?? "") \(context)")
        }
        let response = try await fetch(server, "/a/b?q=1")
        #expect(response.text == "sync GET /a/b 1 no task")
        #expect(response.header("X-Request-Id") != nil)
        await server.stop()
        #expect(server.inFlightRequestCount == 0)
    }

    @Test func trailingClosureMeansTheAsyncHandler() async throws {
        // A synchronous-looking closure given to init still runs as a task, off MHD's threads.
        let server = try HTTPServer(configuration: testConfiguration()) { request in
            .text(withUnsafeCurrentTask { $0 == nil ? "no task" : "task" })
        }
        let response = try await fetch(server, "/")
        #expect(response.text == "task")
        await server.stop()
    }

    @Test func peerAddressesAreFormatted() throws {
        func describe(_ host: String, _ port: UInt16) throws -> String? {
            var address = try SocketAddress(host: host, port: port)
            return address.withSockaddr { SocketAddress.describe($0) }
        }
        #expect(try describe("127.0.0.1", 54321) == "127.0.0.1:54321")
        #expect(try describe("255.255.255.255", 65535) == "255.255.255.255:65535")
        #expect(try describe("10.0.100.1", 0) == "10.0.100.1:0")
        #expect(try describe("::1", 8080) == "[::1]:8080")
    }

    @Test func invalidHostIsRejected() {
        #expect(throws: HTTPServerError.self) {
            _ = try HTTPServer(configuration: HTTPServer.Configuration(host: "not a host")) { _ in HTTPResponse() }
        }
    }

    @Test func signalHandlerCallsTheClosure() async throws {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        let handler = ShutdownSignalHandler(signals: [SIGUSR2]) { signal in continuation.yield(signal) }
        defer { handler.cancel() }
        // The source registers asynchronously: send until it reports (bounded).
        let sender = Task {
            for _ in 0..<100 {
                kill(getpid(), SIGUSR2)
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        var iterator = stream.makeAsyncIterator()
        let received = await iterator.next()
        sender.cancel()
        #expect(received == SIGUSR2)
    }
}
