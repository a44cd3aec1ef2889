import COpenSSL
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Certificates for https tests, made with the `openssl` command (a Debian package the build
/// installs): a CA, and a leaf per host name whose subjectAltName is that name, as PEM files
/// in a temporary directory.
struct TestTLSCertificates: Sendable {
    let directory: URL

    /// The CA certificate: what a client configured with it as its bundle trusts.
    var caBundlePath: String { directory.appendingPathComponent("ca.pem").path }

    func certificatePath(_ name: String) -> String { directory.appendingPathComponent("\(name).pem").path }
    func keyPath(_ name: String) -> String { directory.appendingPathComponent("\(name).key").path }

    static func make(names: [String]) throws -> TestTLSCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(uniqueDigits())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificates = TestTLSCertificates(directory: directory)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try run(
            ["req", "-x509"] + curve + [
                "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Storekeeper Test Webhook CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
            ], in: directory)
        for (index, name) in names.enumerated() {
            try run(
                ["req", "-new"] + curve + ["-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=\(name)"],
                in: directory)
            try Data("subjectAltName=DNS:\(name)\nextendedKeyUsage=serverAuth\n".utf8).write(
                to: directory.appendingPathComponent("\(name).ext"))
            try run(
                [
                    "x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial",
                    String(index + 2), "-days", "2", "-extfile", "\(name).ext", "-out", "\(name).pem",
                ], in: directory)
        }
        return certificates
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    private static func run(_ arguments: [String], in directory: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw WebhookTestFailure("openssl \(arguments.prefix(2).joined(separator: " ")) failed")
        }
    }
}

/// An https webhook receiver on `address` (any 127.x address: Linux routes the whole /8 to
/// loopback), port chosen by the kernel, presenting `certificate` (one of
/// `TestTLSCertificates`' names) through OpenSSL. It answers each complete request 200 and
/// records it; it also counts TCP connections, so a test can tell "never contacted" from "the
/// TLS handshake failed". One connection at a time, on a thread of its own.
/// - Note: `@unchecked Sendable` is safe: the `SSL_CTX` is configured in `init` and then used
///   only by the accept thread, and freed after that thread has finished; what tests read sits
///   behind a `Mutex`.
final class TLSWebhookReceiver: @unchecked Sendable {
    struct Delivery: Sendable {
        let requestLine: String
        /// Header names as sent.
        let headers: [String: String]
        let body: Data
    }

    struct Record {
        var connections = 0
        var deliveries: [Delivery] = []
    }

    let address: String
    let port: Int
    private let listener: Int32
    private let context: OpaquePointer
    private let record = Mutex(Record())
    private let finished = DispatchSemaphore(value: 0)

    init(address: String, certificates: TestTLSCertificates, name: String) throws {
        // OpenSSL writes with write(2): a client gone mid-handshake must fail the write, not
        // end the test process.
        _ = signal(SIGPIPE, SIG_IGN)
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw WebhookTestFailure("SSL_CTX_new failed") }
        guard SSL_CTX_use_certificate_chain_file(context, certificates.certificatePath(name)) == 1,
            SSL_CTX_use_PrivateKey_file(context, certificates.keyPath(name), SSL_FILETYPE_PEM) == 1
        else {
            SSL_CTX_free(context)
            throw WebhookTestFailure("the test certificate for \(name) did not load")
        }
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(address)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard listener >= 0, bound == 0, listen(listener, 16) == 0, let port = try? HangingListener.port(of: listener)
        else {
            SSL_CTX_free(context)
            if listener >= 0 { _ = Glibc.close(listener) }
            throw WebhookTestFailure("could not listen on \(address)")
        }
        self.address = address
        self.port = port
        self.listener = listener
        self.context = context
        let thread = Thread { [self] in
            serve()
            finished.signal()
        }
        thread.start()
    }

    var connections: Int { record.withLock { $0.connections } }
    var deliveries: [Delivery] { record.withLock { $0.deliveries } }

    /// Stops accepting, waits for the accept thread, frees OpenSSL's context.
    func stop() {
        _ = shutdown(listener, Int32(SHUT_RDWR))
        _ = Glibc.close(listener)
        finished.wait()
        SSL_CTX_free(context)
    }

    private func serve() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            record.withLock { $0.connections += 1 }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            _ = setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            _ = setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if let ssl = SSL_new(context) {
                _ = SSL_set_fd(ssl, client)
                if SSL_accept(ssl) == 1, let delivery = Self.readRequest(ssl) {
                    record.withLock { $0.deliveries.append(delivery) }
                    let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".utf8)
                    _ = SSL_write(ssl, answer, Int32(answer.count))
                    _ = SSL_shutdown(ssl)
                }
                SSL_free(ssl)
            }
            _ = Glibc.close(client)
        }
    }

    /// One request: the head, then `Content-Length` bytes of body (at most 1 MiB).
    private static func readRequest(_ ssl: OpaquePointer) -> Delivery? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let separator = Array("\r\n\r\n".utf8)
        func readMore() -> Bool {
            let count = SSL_read(ssl, &chunk, Int32(chunk.count))
            guard count > 0, buffer.count + Int(count) <= 1 << 20 else { return false }
            buffer += chunk[0..<Int(count)]
            return true
        }
        var headEnd: Int?
        while headEnd == nil {
            guard readMore() else { return nil }
            if buffer.count >= 4 {
                headEnd = (0...(buffer.count - 4)).first { Array(buffer[$0..<($0 + 4)]) == separator }
            }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = headers.first { $0.key.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
        let bodyStart = headEnd! + 4
        while buffer.count - bodyStart < length {
            guard readMore() else { return nil }
        }
        return Delivery(
            requestLine: head.first ?? "", headers: headers, body: Data(buffer[bodyStart..<(bodyStart + length)]))
    }
}
