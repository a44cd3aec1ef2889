import AppStoreModels
import AppStoreTrust
import Foundation
import HTTPServer
import StorekeeperTesting
import Synchronization
import Testing

/// `storekeeper appstore …` against a loopback stub of the App Store Server API: the binary
/// signs a real bearer token, calls the documented path and verifies what comes back.
struct AppStoreCLITests {
    let cli = CLITests()

    @Test func transactionCommandCallsTheAPIAndVerifiesTheAnswer() throws {
        let directory = try cli.temporaryDirectory()
        let ca = try TestSigning.authority()
        try ca.write(to: directory)
        let apiKey = try PrivateKey.generateP256()
        let keyFile = directory.appendingPathComponent("SubscriptionKey_CLI.p8")
        try apiKey.pkcs8PEM.write(to: keyFile, atomically: true, encoding: .utf8)
        let signed = try ca.signer.sign(TestSigning.transaction(transactionId: "2000000000000042"))
        let seen = Mutex<[String]>([])
        let verifier = AppStoreConnectTokenVerifier(keys: ["CLIKEY1234": apiKey.publicKey])
        let server = try HTTPServer.synchronous { request in
            let bearer = request.headers["Authorization"].map { String($0.dropFirst("Bearer ".count)) } ?? ""
            let claims = try? verifier.verify(bearer, now: Timestamp(Date())).claims
            seen.withLock { $0.append("\(request.method.rawValue) \(request.path) bid=\(claims?.bid ?? "invalid")") }
            guard claims != nil else { return .json(data: Data(#"{"errorCode":4010000}"#.utf8), status: .unauthorized) }
            return .json(data: Data(#"{"signedTransactionInfo":"\#(signed)"}"#.utf8))
        }
        defer { Task { await server.stop() } }

        let result = try cli.run([
            "appstore", "transaction", "2000000000000042", "--key", keyFile.path, "--key-id", "CLIKEY1234",
            "--issuer-id", "issuer-1", "--bundle-id", "com.example", "--environment", "Sandbox",
            "--base-url", server.baseURL.absoluteString, "--root", directory.appendingPathComponent("root.der").path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(seen.withLock { $0 } == ["GET /inApps/v1/transactions/2000000000000042 bid=com.example"])
        let printed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let response = printed?["response"] as? [String: Any]
        #expect(response?["signedTransactionInfo"] as? String == signed)
        let verified = (printed?["verified"] as? [[String: Any]])?.first
        #expect(verified?["transactionId"] as? String == "2000000000000042")
        #expect(verified?["price"] as? Int == 9990)

        let unauthorized = try cli.run([
            "appstore", "transaction", "2000000000000042", "--key", keyFile.path, "--key-id", "OTHERKEY",
            "--issuer-id", "issuer-1", "--bundle-id", "com.example", "--environment", "Sandbox",
            "--base-url", server.baseURL.absoluteString,
        ])
        #expect(unauthorized.status == 1)
        #expect(unauthorized.stdout.isEmpty)
    }
}
