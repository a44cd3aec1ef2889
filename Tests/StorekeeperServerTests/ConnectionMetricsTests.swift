import Dispatch
import Foundation
import HTTPServer
import StorekeeperServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The HTTP core's connection counters on `/metrics`: each provoked on a server of its own,
/// then read back with exact values.
@Suite(.serialized) struct ConnectionMetricsTests {
    @Test func addressRefusalsEvictionsAndOpenConnectionsAreExported() async throws {
        // 8 connections at most, eviction above 7; 2 per client address; no deadline in reach.
        let harness = try await ServerHarness(configure: { configuration in
            configuration.connectionLimit = 8
            configuration.maxConnectionsPerAddress = 2
            configuration.requestHeadTimeoutSeconds = 60
        })
        defer { Task { await harness.stop() } }
        let server = harness.server
        let port = Int(server.port)

        // A third connection from one address is refused.
        var held = try await [
            LoopbackClient(port: port, from: "127.0.0.21"), LoopbackClient(port: port, from: "127.0.0.21"),
        ]
        try await Self.wait { server.connectionStatistics.open == 2 }
        let refused = try await LoopbackClient(port: port, from: "127.0.0.21")
        try await Self.wait {
            server.connectionStatistics.addressRefusals == 1 && server.connectionStatistics.open == 2
        }
        refused.close()

        // The eighth connection evicts the oldest one waiting for its first request.
        for source in ["127.0.0.22", "127.0.0.22", "127.0.0.23", "127.0.0.23", "127.0.0.24"] {
            let expected = held.count + 1
            held.append(try await LoopbackClient(port: port, from: source))
            try await Self.wait { server.connectionStatistics.open == expected }
        }
        #expect(server.connectionStatistics.evicted == 0)
        held.append(try await LoopbackClient(port: port, from: "127.0.0.24"))
        try await Self.wait { server.connectionStatistics.evicted == 1 && server.connectionStatistics.open == 7 }
        for client in held { client.close() }
        try await Self.wait { server.connectionStatistics.open == 0 }

        let metrics = try await LoopbackClient.get(port: port, path: "/metrics")
        #expect(
            metrics.contains("\n# TYPE storekeeper_http_connections_open gauge\nstorekeeper_http_connections_open 1\n"))
        #expect(metrics.contains("\nstorekeeper_http_connections_address_refusals_total 1\n"))
        #expect(metrics.contains("\nstorekeeper_http_connections_evicted_total 1\n"))
        #expect(metrics.contains("\nstorekeeper_http_connections_head_timeouts_total 0\n"))
        #expect(metrics.contains("\nstorekeeper_http_connections_slow_bodies_total 0\n"))
        #expect(
            metrics.contains(
                "# HELP storekeeper_http_connections_address_refusals_total Connections closed at accept because "
                    + "their client address held maxConnectionsPerAddress already.\n"))
    }

    @Test func headTimeoutsAndSlowBodiesAreExported() async throws {
        // A head must be complete within 1 s; after that 1 s of grace a body must keep 100 B/s.
        let harness = try await ServerHarness(configure: { configuration in
            configuration.requestHeadTimeoutSeconds = 1
            configuration.minBodyBytesPerSecond = 100
        })
        defer { Task { await harness.stop() } }
        let server = harness.server
        let port = Int(server.port)

        let trickling = try await LoopbackClient(port: port, from: "127.0.0.31")
        trickling.send("GET /health HTTP/1.1\r\nHost: t\r\n")
        let stalling = try await LoopbackClient(port: port, from: "127.0.0.32")
        stalling.send(
            "POST /health HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
        try await Self.wait {
            let statistics = server.connectionStatistics
            return statistics.headTimeouts == 1 && statistics.slowBodies == 1 && statistics.open == 0
        }
        trickling.close()
        stalling.close()

        let metrics = try await LoopbackClient.get(port: port, path: "/metrics")
        #expect(metrics.contains("\nstorekeeper_http_connections_open 1\n"))
        #expect(metrics.contains("\nstorekeeper_http_connections_head_timeouts_total 1\n"))
        #expect(metrics.contains("\nstorekeeper_http_connections_slow_bodies_total 1\n"))
        #expect(metrics.contains("\nstorekeeper_http_connections_evicted_total 0\n"))
        #expect(metrics.contains("\nstorekeeper_http_connections_address_refusals_total 0\n"))
    }

    /// Polls `condition` every 10 ms for up to 20 s (a loaded machine), then requires it.
    static func wait(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while !condition() && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(condition())
    }
}

/// A TCP connection to 127.0.0.1 from a chosen loopback source address (the per-address limit
/// tells clients apart by it). Blocking socket calls run on a dispatch queue, off the
/// cooperative pool the server under test answers from.
final class LoopbackClient: Sendable {
    let descriptor: Int32

    init(port: Int, from source: String) async throws {
        let descriptor = await Self.offPool { () -> Int32 in
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { return -1 }
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            var remote = sockaddr_in()
            remote.sin_family = sa_family_t(AF_INET)
            remote.sin_port = UInt16(port).bigEndian
            remote.sin_addr.s_addr = inet_addr("127.0.0.1")
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
            }
            let connected = withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, length) }
            }
            guard bound == 0, connected == 0 else {
                _ = Glibc.close(descriptor)
                return -1
            }
            return descriptor
        }
        guard descriptor >= 0 else { throw WebhookTestFailure("could not connect from \(source)") }
        self.descriptor = descriptor
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func close() { _ = Glibc.close(descriptor) }

    /// Everything the server sends until it closes (or 10 s pass).
    func readToEnd() async -> String {
        let descriptor = self.descriptor
        return await Self.offPool {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { break }
                received += buffer[0..<count]
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// A GET on a connection of its own (closed after the answer), from 127.0.0.1: the whole
    /// answer, head and body.
    static func get(port: Int, path: String) async throws -> String {
        let client = try await LoopbackClient(port: port, from: "127.0.0.1")
        defer { client.close() }
        client.send("GET \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        return await client.readToEnd()
    }

    static func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}
