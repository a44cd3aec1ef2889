import Foundation
import Synchronization
import Testing

@testable import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Graceful stop over loopback.
@Suite struct ShutdownTests {
    let responder = makeTestRouter().buildResponder()

    func waitForInFlight(_ server: HTTPServer, count: Int = 1) async throws {
        for _ in 0..<2000 where server.inFlightRequestCount < count {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(server.inFlightRequestCount >= count)
    }

    /// Stopping while connections keep arriving never aborts the process. With libmicrohttpd's
    /// epoll mode and a thread pool, `MHD_quiesce_daemon` marks each worker quiesced and then
    /// removes the listen socket from its epoll set; a worker woken in between removes it itself,
    /// and the quiesce's own removal then fails and libmicrohttpd panics (seen in a CI run:
    /// "Failed to remove listen FD from epoll set"). The server polls instead.
    @Test func stopWhileConnectionsArriveNeverAborts() async throws {
        for _ in 0..<300 {
            let server = try HTTPServer(
                configuration: testConfiguration(shutdownGracePeriod: .milliseconds(100)), responder: responder)
            let port = server.port
            let stopping = Atomic<Bool>(false)
            // Connections opened and closed without a request: each wakes a worker (an accept,
            // then a close) and none leaves a request in flight for the stop to wait on.
            let clients = Thread {
                while !stopping.load(ordering: .relaxed) {
                    guard let descriptor = LoopbackSocket.open(port: port, from: nil) else { continue }
                    _ = LoopbackSocket.wait(descriptor, for: Int32(POLLOUT), timeout: 0.05)
                    close(descriptor)
                }
            }
            clients.start()
            try await Task.sleep(for: .milliseconds(Int.random(in: 1...8)))
            await server.stop()
            stopping.store(true, ordering: .relaxed)
        }
    }

    /// A client that sends a request and hangs up before its answer leaves nothing behind: the
    /// request's record of being suspended goes when libmicrohttpd ends it, so the server does
    /// not keep it (a leak per such client) and a later stop does not wait for it to be resumed.
    @Test func aClientHangingUpMidRequestLeavesNothingSuspended() async throws {
        let server = try HTTPServer(configuration: testConfiguration(), responder: responder)
        for _ in 0..<3 {
            let descriptor = try #require(LoopbackSocket.open(port: server.port, from: nil))
            #expect(LoopbackSocket.wait(descriptor, for: Int32(POLLOUT), timeout: 2))
            #expect(LoopbackSocket.send(descriptor, Array("GET /sleep/200 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)))
            try await waitForInFlight(server)
            close(descriptor)
        }
        for _ in 0..<400 where server.inFlightRequestCount > 0 || server.suspendedRequestCount > 0 {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(server.inFlightRequestCount == 0)
        #expect(server.suspendedRequestCount == 0)
        let clock = ContinuousClock()
        let started = clock.now
        await server.stop()
        #expect(clock.now - started < .seconds(3))
    }

    @Test func stopFinishesAnInFlightSlowHandler() async throws {
        let server = try HTTPServer(configuration: testConfiguration(), responder: responder)
        async let slow = fetch(server, "/sleep/700")
        try await waitForInFlight(server)
        let clock = ContinuousClock()
        let stopStarted = clock.now
        await server.stop()
        let stopTook = clock.now - stopStarted
        let response = try await slow
        #expect(response.status == 200)
        #expect(response.text == "slept 700")
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(stopTook > .milliseconds(300) && stopTook < .seconds(4))
        #expect(server.inFlightRequestCount == 0)

        // Nothing listens any more.
        await #expect(throws: (any Error).self) { _ = try await fetch(server, "/health") }
    }

    @Test func stopIsBoundedAndAnswers503PastTheGracePeriod() async throws {
        let server = try HTTPServer(configuration: testConfiguration(), responder: responder)
        async let slow = fetch(server, "/sleep/3000")
        try await waitForInFlight(server)
        let clock = ContinuousClock()
        let stopStarted = clock.now
        await server.stop(gracePeriod: .milliseconds(200))
        #expect(clock.now - stopStarted < .seconds(2))
        let response = try await slow
        #expect(response.status == 503)
        #expect(response.errorCode == "shutting_down")
        #expect(server.inFlightRequestCount == 0)
    }

    @Test func idleKeepAliveConnectionIsServedWithCloseWhileDraining() async throws {
        let server = try HTTPServer(configuration: testConfiguration(), responder: responder)
        let connection = try await onThread { () -> RawConnection in
            let connection = try RawConnection(port: server.port)
            try connection.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
            _ = connection.readResponse()
            return connection
        }
        // The first request may still count as in flight just after its answer (its completion
        // runs on the server's thread): wait it out, or the wait below would not be for the slow
        // one, and the stop would close the listening socket before the slow one connects (seen
        // once in a loaded test run: the slow request lost, the idle connection closed unserved).
        for _ in 0..<2000 where server.inFlightRequestCount > 0 {
            try await Task.sleep(for: .milliseconds(5))
        }
        async let slow = fetch(server, "/sleep/600")  // keeps stop() in its grace period
        try await waitForInFlight(server)
        async let stopped: Void = server.stop()
        try await Task.sleep(for: .milliseconds(150))
        let (response, closed) = try await onThread { () -> (RawResponse?, Bool) in
            try connection.send("GET /files/late HTTP/1.1\r\nHost: t\r\n\r\n")
            let response = connection.readResponse()
            return (response, connection.read(until: Date().addingTimeInterval(3)).closed)
        }
        #expect(response?.status == 200)
        #expect(response?.header("Connection")?.lowercased() == "close")
        #expect(closed)
        #expect(try await slow.status == 200)
        await stopped
    }

    @Test func stopIsIdempotentAndConcurrentCallersWait() async throws {
        let server = try HTTPServer(configuration: testConfiguration(), responder: responder)
        async let slow = fetch(server, "/sleep/300")
        try await waitForInFlight(server)
        async let first: Void = server.stop()
        async let second: Void = server.stop()
        _ = await (first, second)
        #expect(server.isStopped)
        #expect(try await slow.status == 200)
        await server.stop()
    }

    @Test func droppingARunningServerStopsIt() async throws {
        var server: HTTPServer? = try HTTPServer(configuration: testConfiguration(), responder: responder)
        let port = server!.port
        #expect(try await fetch(server!, "/health").status == 200)
        server = nil
        let refused = try await onThread { () -> Bool in (try? RawConnection(port: port)) == nil }
        #expect(refused)
    }
}
