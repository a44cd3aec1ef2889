import Foundation
import Testing

@testable import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Limits and malformed input, over loopback.
@Suite struct LimitsTests {
    let responder = makeTestRouter().buildResponder()

    @Test func twoMebibyteBodyGets413() async throws {
        let logged = Locked<[AccessLogEntry]>([])
        let configuration = testConfiguration(accessLog: { entry in logged.withLock { $0.append(entry) } })
        try await withServer(configuration, responder: responder) { server in
            let big = Data(repeating: 0x61, count: 2 << 20)
            let response = try await fetch(server, "/echo", method: "POST", body: big)
            #expect(response.status == 413)
            #expect(response.errorCode == "content_too_large")
            #expect(response.header("X-Request-Id") != nil)

            // Exactly at the limit is fine.
            let atLimit = Data(repeating: 0x62, count: 1 << 20)
            let ok = try await fetch(server, "/echo", method: "POST", body: atLimit)
            #expect(ok.status == 200 && ok.body == atLimit)
        }
        #expect(logged.withLock { $0.map(\.status) } == [413])
    }

    @Test func overLimitBodiesAreRefusedUnreadWhenPossible() async throws {
        try await withServer(responder: responder) { server in
            // Expect: 100-continue: answered before the client sends any body.
            let expecting = try await onThread {
                let connection = try RawConnection(port: server.port)
                try connection.send(
                    "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2097152\r\nExpect: 100-continue\r\n\r\n")
                return connection.readResponse(timeout: 5)
            }
            #expect(expecting?.status == 413)

            // Declared far beyond the discard allowance: answered at once, nothing read.
            let huge = try await onThread {
                let connection = try RawConnection(port: server.port)
                try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 104857600\r\n\r\n")
                return connection.readResponse(timeout: 5)
            }
            #expect(huge?.status == 413)

            // Already being sent and within the allowance: discarded, 413, connection reusable.
            let statuses = try await onThread { () -> [Int?] in
                let connection = try RawConnection(port: server.port)
                try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2097152\r\n\r\n")
                try connection.send(Data(repeating: 0x63, count: 2 << 20))
                let first = connection.readResponse(timeout: 5)?.status
                try connection.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
                return [first, connection.readResponse(timeout: 5)?.status]
            }
            #expect(statuses == [413, 200])
        }
    }

    @Test func chunkedBodyOverTheLimit() async throws {
        try await withServer(testConfiguration(maxBodySize: 1000), responder: responder) { server in
            let chunk = String(repeating: "z", count: 800)
            // Over the limit but within the discard allowance (64 KiB here): 413.
            let small = try await onThread { () -> Int? in
                let connection = try RawConnection(port: server.port)
                try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
                for _ in 0..<3 { try connection.send("320\r\n\(chunk)\r\n") }
                try connection.send("0\r\n\r\n")
                return connection.readResponse(timeout: 5)?.status
            }
            #expect(small == 413)

            // Past the allowance: the connection is closed.
            let closed = try await onThread { () -> Bool in
                let connection = try RawConnection(port: server.port)
                try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
                for _ in 0..<200 { try? connection.send("320\r\n\(chunk)\r\n") }
                return connection.read(until: Date().addingTimeInterval(5)).closed
            }
            #expect(closed)
            #expect(try await fetch(server, "/health").status == 200)
        }
    }

    @Test func oversizedHeadersGet4xxAndTheServerKeepsServing() async throws {
        try await withServer(responder: responder) { server in
            let status = try await onThread { () -> Int? in
                let connection = try RawConnection(port: server.port)
                let filler = String(repeating: "v", count: 64 * 1024)
                try? connection.send("GET /health HTTP/1.1\r\nHost: t\r\nX-Filler: \(filler)\r\n\r\n")
                return connection.readResponse(timeout: 5)?.status
            }
            let code = try #require(status)
            #expect((400..<500).contains(code))
            #expect(try await fetch(server, "/health").status == 200)
        }
    }

    /// Expected status, or nil where libmicrohttpd 0.9.75 closes without answering (a request
    /// line without any space cannot be parsed far enough to answer).
    @Test(
        arguments: [
            ("GET /\r\n\r\n", 400),
            ("GET / HTTP/1.1 extra\r\nHost: t\r\n\r\n", 400),
            ("GET /health HTTP/1.1\r\n\r\n", 400),  // HTTP/1.1 requires Host
            ("GET /health HTTP/1.1\r\nHost: t\r\nBad Header Line\r\n\r\n", 400),
            ("GET /health HTTP/9.9\r\nHost: t\r\n\r\n", 505),
            ("GARBAGE\r\n\r\n", nil),
            ("\u{01}\u{02} \r\n\r\n", 400),
        ] as [(String, Int?)])
    func malformedRequestsAreRefusedAndTheServerKeepsServing(raw: String, expected: Int?) async throws {
        try await withServer(responder: responder) { server in
            let (response, closed) = try await onThread { () -> (RawResponse?, Bool) in
                let connection = try RawConnection(port: server.port)
                try connection.send(raw)
                let (data, closed) = connection.read(until: Date().addingTimeInterval(5))
                return (RawResponse.parse(data), closed)
            }
            #expect(response?.status == expected)
            #expect(closed)
            #expect(try await fetch(server, "/health").status == 200)
        }
    }

    /// Framing libmicrohttpd would otherwise accept (reading a `gzip` body until the client
    /// closes, taking one of two `Content-Length`s): answered at once, then closed.
    @Test(
        arguments: [
            ("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\nabcd", 400),
            ("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
            ("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
            (
                "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                400
            ),
            ("POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        ] as [(String, Int)])
    func ambiguousFramingIsAnsweredAndClosed(raw: String, expected: Int) async throws {
        try await withServer(responder: responder) { server in
            let (data, closed) = try await onThread { () -> (Data, Bool) in
                let connection = try RawConnection(port: server.port)
                try connection.send(raw)
                return connection.read(until: Date().addingTimeInterval(5))
            }
            let response = RawResponse.parse(data)
            #expect(response?.status == expected)
            #expect(response?.header("Connection") == "close")
            #expect(closed)
        }
    }

    @Test func busyConnectionsAreNeverEvictedAndExtraOnesWaitForAFreeSlot() async throws {
        // Eviction starts above one connection; the idle timeout is far beyond the test.
        let configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, threadPoolSize: 1, connectionLimit: 2, connectionTimeout: .seconds(30))
        try await withServer(configuration, responder: responder) { server in
            let (sleepers, whileFull, afterFree) = try await onThread { () -> ([RawResponse?], Int?, Int?) in
                // Each sends its request at once (a connection still silent could be evicted).
                let busy = try (0..<2).map { _ in
                    let connection = try RawConnection(port: server.port)
                    try connection.send("GET /sleep/1500 HTTP/1.1\r\nHost: t\r\n\r\n")
                    Thread.sleep(forTimeInterval: 0.15)  // in its handler
                    return connection
                }
                let extra = try RawConnection(port: server.port)  // completes in the kernel backlog
                try extra.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
                let whileFull = extra.readResponse(timeout: 0.7)?.status
                let sleepers = busy.map { $0.readResponse(timeout: 5) }
                // The answered connections are over the eviction threshold: told to close, and
                // closed, so the waiting one is accepted long before any timeout.
                return (sleepers, whileFull, extra.readResponse(timeout: 5)?.status)
            }
            #expect(sleepers.map { $0?.status } == [200, 200])
            #expect(sleepers.first??.header("Connection") == "close")  // two open: over the threshold
            #expect(whileFull == nil)
            #expect(afterFree == 200)
            #expect(server.connectionStatistics.evicted == 0)
        }
    }

    @Test func slowClientIsCutOffByTheTimeout() async throws {
        try await withServer(testConfiguration(connectionTimeout: .seconds(1)), responder: responder) { server in
            let (closed, elapsed) = try await onThread { () -> (Bool, TimeInterval) in
                let connection = try RawConnection(port: server.port)
                let started = Date()
                try connection.send("GET /health HTTP/1.1\r\nHost: t\r\n")  // never finishes
                let (_, closed) = connection.read(until: Date().addingTimeInterval(5))
                return (closed, Date().timeIntervalSince(started))
            }
            #expect(closed)
            #expect(elapsed >= 0.8 && elapsed < 4.5)

            let idleClosed = try await onThread { () -> Bool in
                let connection = try RawConnection(port: server.port)
                return connection.read(until: Date().addingTimeInterval(5)).closed  // sends nothing
            }
            #expect(idleClosed)
            #expect(try await fetch(server, "/health").status == 200)
        }
    }
}
