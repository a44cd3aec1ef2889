import Foundation
import Testing

@testable import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// Connection exhaustion against a live server on loopback: floods of slow request heads and
/// of idle keep-alive connections (attackers on 127.0.0.2 and up, as separate hosts would be,
/// each under the per-address limit), while a normal client on 127.0.0.1 must still be answered
/// with a p99 under 100 ms; plus the per-address limit, the request-head deadline and the
/// minimum body rate one at a time.
@Suite(.serialized) struct ConnectionFloodTests {
    let responder = makeTestRouter().buildResponder()

    init() {
        LoopbackSocket.raiseOpenFileLimit()
    }

    @Test func normalClientIsAnsweredDuringASlowHeaderFlood() async throws {
        // The default limit of 1,000 connections, all taken by slowloris connections from 20
        // addresses (50 each, under the per-address limit); the idle timeout alone would keep
        // them forever, since each byte restarts it.
        let configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, threadPoolSize: 2, connectionLimit: 1000, connectionTimeout: .seconds(30),
            requestHeadTimeout: .seconds(2), maxConnectionsPerAddress: 64)
        try await withServer(configuration, responder: responder) { server in
            let flood = SlowHeaderFlood(port: server.port, connections: 1000, perAddress: 50)
            flood.start()
            for _ in 0..<500 where flood.counts.open < 1000 { try await Task.sleep(for: .milliseconds(10)) }
            let held = flood.counts.open
            let results = try await onThread { NormalClient.measure(port: server.port, count: 200, interval: 0.01) }
            let counts = flood.stop()
            let (p50, p99) = (NormalClient.percentile(results, 0.5), NormalClient.percentile(results, 0.99))
            print("slow-header flood (1000 connections): normal client p50 \(p50) ms, p99 \(p99) ms, \(counts)")
            #expect(held == 1000)
            #expect(results.count == 200)
            #expect(results.allSatisfy { $0 != nil })
            #expect(p99 < 100)
            #expect(counts.closedByServer > 0)
            #expect(server.connectionStatistics.evicted > 0)
        }
    }

    @Test func normalClientIsAnsweredDuringAnIdleKeepAliveFlood() async throws {
        // Twice the limit of idle keep-alive connections; neither timeout ends within the test.
        let configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, threadPoolSize: 2, connectionLimit: 500, connectionTimeout: .seconds(30),
            requestHeadTimeout: .seconds(30), maxConnectionsPerAddress: 64)
        try await withServer(configuration, responder: responder) { server in
            let flood = IdleKeepAliveFlood()
            let answered = try await onThread {
                flood.open(port: server.port, connections: 1000, perAddress: 50, timeout: 20)
            }
            let results = try await onThread { NormalClient.measure(port: server.port, count: 200, interval: 0.01) }
            let statistics = server.connectionStatistics
            try await onThread { flood.close() }
            let (p50, p99) = (NormalClient.percentile(results, 0.5), NormalClient.percentile(results, 0.99))
            print("idle keep-alive flood (1000 connections): normal client p50 \(p50) ms, p99 \(p99) ms, \(statistics)")
            #expect(answered == 1000)
            #expect(results.count == 200)
            #expect(results.allSatisfy { $0 != nil })
            #expect(p99 < 100)
            // Every attacker beyond the eviction threshold closed (at least) one idle one.
            let threshold = configuration.connectionLimit - configuration.evictionHeadroom
            #expect(statistics.evicted >= 1000 - threshold)
            #expect(statistics.open <= configuration.connectionLimit)
        }
    }

    @Test func oneAddressHoldsAtMostItsLimit() async throws {
        let configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, threadPoolSize: 2, connectionLimit: 100, connectionTimeout: .seconds(30),
            maxConnectionsPerAddress: 8)
        try await withServer(configuration, responder: responder) { server in
            let (answered, refused, other) = try await onThread { () -> (Int, Int, Int?) in
                let sockets = (0..<12).compactMap { _ in LoopbackSocket.open(port: server.port, from: "127.0.0.9") }
                defer { sockets.forEach { close($0) } }
                var answered = 0
                var refused = 0
                for socket in sockets {
                    _ = LoopbackSocket.wait(socket, for: Int32(POLLOUT), timeout: 2)
                    _ = LoopbackSocket.send(socket, Array("GET /health HTTP/1.1\r\nHost: t\r\n\r\n".utf8))
                }
                for socket in sockets {
                    if LoopbackSocket.readResponse(socket, until: Date().addingTimeInterval(3))?.status == 200 {
                        answered += 1
                    } else if LoopbackSocket.isClosed(socket) {
                        refused += 1
                    }
                }
                // Another address is not affected.
                let other = LoopbackSocket.open(port: server.port, from: "127.0.0.10").flatMap { socket in
                    defer { close(socket) }
                    _ = LoopbackSocket.wait(socket, for: Int32(POLLOUT), timeout: 2)
                    _ = LoopbackSocket.send(socket, Array("GET /health HTTP/1.1\r\nHost: t\r\n\r\n".utf8))
                    return LoopbackSocket.readResponse(socket, until: Date().addingTimeInterval(3))?.status
                }
                return (answered, refused, other)
            }
            #expect(answered == 8)
            #expect(refused == 4)
            #expect(other == 200)
        }
    }

    @Test func requestHeadMustArriveWithinTheDeadline() async throws {
        let configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, threadPoolSize: 2, connectionTimeout: .seconds(30),
            requestHeadTimeout: .seconds(1))
        try await withServer(configuration, responder: responder) { server in
            // A head trickled one byte every 200 ms: each byte restarts the idle timeout, not the deadline.
            async let trickled = onThread { () -> (answered: Bool, closedAfter: TimeInterval?) in
                let connection = try RawConnection(port: server.port)
                let started = Date()
                try connection.send("GET /health HTTP/1.1\r\nHost: t\r\n")
                while Date().timeIntervalSince(started) < 5 {
                    try? connection.send("X")
                    let (data, closed) = connection.read(until: Date().addingTimeInterval(0.2))
                    if closed { return (!data.isEmpty, Date().timeIntervalSince(started)) }
                }
                return (false, nil)
            }
            // An idle keep-alive connection: the deadline runs from its previous response.
            async let idle = onThread { () -> (status: Int?, closedAfter: TimeInterval?) in
                let connection = try RawConnection(port: server.port)
                try connection.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
                let status = connection.readResponse(timeout: 5)?.status
                let answered = Date()
                let closed = connection.read(until: answered.addingTimeInterval(5)).closed
                return (status, closed ? Date().timeIntervalSince(answered) : nil)
            }
            // A slow head that is complete in time is served.
            async let inTime = onThread { () -> Int? in
                let connection = try RawConnection(port: server.port)
                for piece in ["GET /hea", "lth HTTP/1.1\r\n", "Host: t\r\n", "\r\n"] {
                    try connection.send(piece)
                    Thread.sleep(forTimeInterval: 0.1)
                }
                return connection.readResponse(timeout: 5)?.status
            }
            let (slow, kept, served) = try await (trickled, idle, inTime)
            #expect(slow.answered == false)
            let slowClosed = try #require(slow.closedAfter, "the trickling connection was not closed")
            #expect(slowClosed >= 0.9 && slowClosed < 4)
            #expect(kept.status == 200)
            let idleClosed = try #require(kept.closedAfter, "the idle connection was not closed")
            #expect(idleClosed >= 0.5 && idleClosed < 4)  // timed from the client's read, a little after the server's
            #expect(served == 200)
            #expect(server.connectionStatistics.headTimeouts == 2)
            #expect(server.connectionStatistics.evicted == 0)
        }
    }

    @Test func slowBodyIsCutOffAndABriskOneIsNot() async throws {
        let configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, threadPoolSize: 2, connectionTimeout: .seconds(30),
            requestHeadTimeout: .seconds(10),
            minimumBodyRate: HTTPServer.MinimumBodyRate(bytesPerSecond: 1000, grace: .seconds(1)))
        try await withServer(configuration, responder: responder) { server in
            // 100 bytes a second against a minimum of 1,000 after a second's grace.
            async let slow = onThread { () -> (answered: Bool, closedAfter: TimeInterval?) in
                let connection = try RawConnection(port: server.port)
                try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n")
                let started = Date()
                while Date().timeIntervalSince(started) < 5 {
                    try? connection.send(String(repeating: "s", count: 20))
                    let (data, closed) = connection.read(until: Date().addingTimeInterval(0.2))
                    if closed { return (!data.isEmpty, Date().timeIntervalSince(started)) }
                }
                return (false, nil)
            }
            // 3,000 bytes in 0.6 s.
            async let brisk = onThread { () -> RawResponse? in
                let connection = try RawConnection(port: server.port)
                try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3000\r\n\r\n")
                for piece in 0..<3 {
                    if piece > 0 { Thread.sleep(forTimeInterval: 0.3) }
                    try connection.send(String(repeating: "b", count: 1000))
                }
                return connection.readResponse(timeout: 5)
            }
            let (cut, served) = try await (slow, brisk)
            #expect(cut.answered == false)
            let closedAfter = try #require(cut.closedAfter, "the slow body was not cut off")
            #expect(closedAfter >= 1.0 && closedAfter < 4)
            #expect(served?.status == 200)
            #expect(served?.body == Data(String(repeating: "b", count: 3000).utf8))
            #expect(server.connectionStatistics.slowBodies == 1)
        }
    }
}
