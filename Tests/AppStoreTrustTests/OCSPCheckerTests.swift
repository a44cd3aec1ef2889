import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import AppStoreTrust

/// Online revocation against real `openssl ocsp` responders on loopback, one per issuer.
@Suite(.serialized)
struct OCSPCheckerTests {
    /// Starts `openssl ocsp` for certificates issued by `issuer`, listing `entries`.
    final class Responder {
        let process = Process()
        let port: Int

        init(
            issuer: Certificate, issuerKey: PrivateKey, entries: [(Certificate, revoked: Bool)], port: Int,
            directory: URL
        ) throws {
            self.port = port
            let name = "responder-\(port)"
            let issuerPEM = directory.appendingPathComponent("\(name)-issuer.pem")
            let keyPEM = directory.appendingPathComponent("\(name)-issuer.key.pem")
            let index = directory.appendingPathComponent("\(name)-index.txt")
            try issuer.pem.write(to: issuerPEM, atomically: true, encoding: .utf8)
            try issuerKey.pkcs8PEM.write(to: keyPEM, atomically: true, encoding: .utf8)
            let lines = entries.map { certificate, revoked in
                // index.txt: status, expiry, revocation time, serial, file, subject
                "\(revoked ? "R" : "V")\t351231235959Z\t\(revoked ? "250101000000Z" : "")\t\(certificate.serialNumberHex)\tunknown\t/CN=test"
            }
            try (lines.joined(separator: "\n") + "\n").write(to: index, atomically: true, encoding: .utf8)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = [
                "ocsp", "-index", index.path, "-port", "\(port)", "-rsigner", issuerPEM.path,
                "-rkey", keyPEM.path, "-CA", issuerPEM.path, "-nmin", "5",
            ]
            // Readiness is read from the responder's own log: a probe connection that sends no
            // request sends `openssl ocsp` 3.0 into a busy loop.
            let log = Pipe()
            process.standardOutput = log
            process.standardError = log
            try process.run()
            var seen = ""
            let deadline = Date().addingTimeInterval(10)
            while !seen.contains("waiting for OCSP client connections"), !seen.contains("Error starting accept"),
                Date() < deadline
            {
                seen += String(decoding: log.fileHandleForReading.availableData, as: UTF8.self)
            }
            guard seen.contains("waiting for OCSP client connections") else {
                stop()
                // The port was free when chosen, but another process (the other test shard
                // starts servers too) can take it before the responder binds it.
                if seen.contains("Error starting accept") { throw PortTaken() }
                let seen = seen
                throw TrustError(.ocspUnreachable, "test responder did not start on \(port): \(seen)")
            }
        }

        func stop() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        deinit { stop() }
    }

    static func freePort() -> Int {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socketDescriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketDescriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    struct PortTaken: Error {}

    struct Setup {
        let ca: TestCertificateAuthority
        let responders: [Responder]
        let verifier: SignedDataVerifier
    }

    /// A CA whose OCSP URLs name two free ports, with responders on them: chosen again (a new
    /// CA, new ports) when a port was taken between choosing and binding it.
    func setup(leafRevoked: Bool, intermediateRevoked: Bool = false, respondersRunning: Bool = true) throws -> Setup {
        for _ in 0..<4 {
            do {
                return try setupOnce(
                    leafRevoked: leafRevoked, intermediateRevoked: intermediateRevoked,
                    respondersRunning: respondersRunning)
            } catch is PortTaken {
                continue
            }
        }
        return try setupOnce(
            leafRevoked: leafRevoked, intermediateRevoked: intermediateRevoked, respondersRunning: respondersRunning)
    }

    func setupOnce(leafRevoked: Bool, intermediateRevoked: Bool, respondersRunning: Bool) throws -> Setup {
        let rootPort = Self.freePort(), intermediatePort = Self.freePort()
        let ca = try TestCertificateAuthority.generate(
            validFrom: TestSigning.validFrom, validUntil: TestSigning.validUntil,
            rootOCSPURL: "http://127.0.0.1:\(rootPort)/", intermediateOCSPURL: "http://127.0.0.1:\(intermediatePort)/")
        let directory = try ScratchDirectories.make(prefix: "ocsp")
        var responders: [Responder] = []
        if respondersRunning {
            responders.append(
                try Responder(
                    issuer: ca.root, issuerKey: ca.rootKey, entries: [(ca.intermediate, intermediateRevoked)],
                    port: rootPort, directory: directory))
            responders.append(
                try Responder(
                    issuer: ca.intermediate, issuerKey: ca.intermediateKey, entries: [(ca.leaf, leafRevoked)],
                    port: intermediatePort, directory: directory))
        }
        let verifier = try SignedDataVerifier(
            rootCertificates: [ca.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox,
            enableOnlineChecks: true, ocsp: OCSPChecker(timeoutSeconds: 2))
        return Setup(ca: ca, responders: responders, verifier: verifier)
    }

    /// A responder whose port another process holds says so (and `setup` then chooses again).
    @Test func aTakenPortIsReportedAsTaken() throws {
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(holder, socketAddress, length) == 0 && listen(holder, 1) == 0
                    && getsockname(holder, socketAddress, &length) == 0
            }
        }
        #expect(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let ca = try TestSigning.authority()
        let directory = try ScratchDirectories.make(prefix: "ocsp")
        #expect(throws: PortTaken.self) {
            _ = try Responder(
                issuer: ca.root, issuerKey: ca.rootKey, entries: [(ca.intermediate, false)], port: port,
                directory: directory)
        }
    }

    @Test func goodChainPassesOnlineCheckAndIsCached() throws {
        let setup = try setup(leafRevoked: false)
        let token = try setup.ca.signer.sign(TestSigning.transaction())
        #expect(try setup.verifier.verifyAndDecodeTransaction(token).payload.transactionId == "1000000001")
        #expect(setup.verifier.cache.count == 1)
        // The responders going away does not matter while the cached result is fresh.
        for responder in setup.responders { responder.stop() }
        #expect(try setup.verifier.verifyAndDecodeTransaction(token).payload.transactionId == "1000000001")
    }

    @Test func revokedLeafIsRefused() throws {
        let setup = try setup(leafRevoked: true)
        do {
            _ = try setup.verifier.verifyAndDecodeTransaction(setup.ca.signer.sign(TestSigning.transaction()))
            Issue.record("revoked leaf accepted")
        } catch {
            #expect(error.rule == .certificateRevoked)
            #expect(error.category == .invalidCertificate)
        }
        #expect(setup.verifier.cache.count == 0)
    }

    @Test func revokedIntermediateIsRefused() throws {
        let setup = try setup(leafRevoked: false, intermediateRevoked: true)
        #expect(throws: TrustError.self) {
            _ = try setup.verifier.verifyAndDecodeTransaction(setup.ca.signer.sign(TestSigning.transaction()))
        }
    }

    @Test func unreachableResponderIsRetryable() throws {
        let setup = try setup(leafRevoked: false, respondersRunning: false)
        do {
            _ = try setup.verifier.verifyAndDecodeTransaction(setup.ca.signer.sign(TestSigning.transaction()))
            Issue.record("chain accepted without a revocation answer")
        } catch {
            #expect(error.rule == .ocspUnreachable)
            #expect(error.category == .retryableVerificationFailure)
        }
    }

    @Test func certificateWithoutResponderURLIsRefusedOnline() throws {
        let ca = try TestSigning.authority()
        let verifier = try SignedDataVerifier(
            rootCertificates: [ca.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox,
            enableOnlineChecks: true)
        do {
            _ = try verifier.verifyAndDecodeTransaction(ca.signer.sign(TestSigning.transaction()))
            Issue.record("accepted without OCSP")
        } catch {
            #expect(error.rule == .ocspURLMissing)
        }
    }
}
