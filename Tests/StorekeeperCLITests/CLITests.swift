import AppStoreTrust
import Dispatch
import Foundation
import StorekeeperTesting
import Testing

/// Runs the real `storekeeper` binary (built beside the test bundle) and compares exact output.
struct CLITests {
    struct Run: Equatable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("storekeeper")

    func run(_ arguments: [String], stdin: String? = nil, in directory: URL? = nil) throws -> Run {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        // A command that should answer at once but serves instead (a broken --help) is ended,
        // so the test fails instead of hanging.
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        defer { watchdog.cancel() }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    /// A new directory, removed when the test process exits.
    func temporaryDirectory() throws -> URL { try ScratchDirectories.make(prefix: "storekeeper-cli") }

    /// Issue 14: a usage error prints the problem, then the command's usage, on standard error.
    @Test func unknownCommandAndBadOptionsAreUsageErrors() throws {
        let unknown = try run(["frobnicate"])
        #expect(unknown.status == 2)
        #expect(unknown.stdout == "")
        #expect(unknown.stderr.hasPrefix("unknown command frobnicate\n\nusage: storekeeper COMMAND [options]\n"))
        let environment = try run(["verify", "--environment", "Bogus", "--bundle-id", "b"], stdin: "x.y.z")
        #expect(environment.status == 2)
        #expect(environment.stdout == "")
        #expect(environment.stderr.hasPrefix("unknown environment Bogus\n\nusage: storekeeper verify --bundle-id ID "))
        let missingValue = try run(["verify", "--root"])
        #expect(missingValue.status == 2)
        #expect(missingValue.stderr.hasPrefix("--root needs a value\n\nusage: storekeeper verify "))
    }

    @Test func signThenVerifyRoundTripsAndRefusalsNameTheRule() throws {
        let directory = try temporaryDirectory()
        let ca = directory.appendingPathComponent("ca").path
        let created = try run(["ca", "init", ca])
        #expect(created.status == 0)
        #expect(
            created.stdout.hasPrefix(
                "wrote root, intermediate and leaf (.der, .pem, .key.pem) to \(ca)\nroot SHA-256: "))
        // `ca init` certificates start a day before now, so the payload is signed "now".
        let signedDate = Int64(Date().timeIntervalSince1970) * 1000
        let payload =
            #"{"bundleId":"com.example.cli","environment":"Sandbox","signedDate":\#(signedDate),"transactionId":"42","price":990}"#
        let signed = try run(
            [
                "jws", "sign", "--key", "\(ca)/leaf.key.pem", "--chain",
                "\(ca)/leaf.der,\(ca)/intermediate.der,\(ca)/root.der",
            ], stdin: payload)
        #expect(signed.status == 0)
        let token = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.split(separator: ".").count == 3)

        let verified = try run(
            ["verify", "--root", "\(ca)/root.der", "--bundle-id", "com.example.cli", "--environment", "Sandbox", "-"],
            stdin: token)
        #expect(
            verified
                == Run(
                    status: 0,
                    stdout: """
                        {
                          "bundleId" : "com.example.cli",
                          "environment" : "Sandbox",
                          "price" : 990,
                          "signedDate" : \(signedDate),
                          "transactionId" : "42"
                        }

                        """, stderr: ""))

        let wrongBundle = try run(
            ["verify", "--root", "\(ca)/root.der", "--bundle-id", "com.other", "--environment", "Sandbox", "-"],
            stdin: token)
        #expect(
            wrongBundle
                == Run(
                    status: 1, stdout: "",
                    stderr:
                        "INVALID_APP_IDENTIFIER [app.bundleIdMismatch]: transaction bundleId does not match com.other\n"
                ))

        let production = try run(
            ["verify", "--root", "\(ca)/root.der", "--bundle-id", "com.example.cli", "-"], stdin: token)
        #expect(
            production
                == Run(
                    status: 1, stdout: "",
                    stderr:
                        "INVALID_CONFIGURATION [config.appAppleIdRequired]: appAppleId is required for the Production environment\n"
                ))

        let truncated = try run(
            ["verify", "--root", "\(ca)/root.der", "--bundle-id", "com.example.cli", "--environment", "Sandbox", "-"],
            stdin: String(token.dropLast(20)) + "!")
        #expect(
            truncated
                == Run(
                    status: 1, stdout: "",
                    stderr: "INVALID_JWT_FORMAT [format.base64]: a JWS part is not unpadded base64url\n"))
    }

    /// Issue 11, defect 9(d): `verify --type renewal` on a notification names the wrong type,
    /// not the environment the notification keeps inside `data`.
    @Test func verifyOfTheWrongTypeNamesThePayloadType() throws {
        let directory = try temporaryDirectory()
        let ca = directory.appendingPathComponent("ca").path
        #expect(try run(["ca", "init", ca]).status == 0)
        let signedDate = Int64(Date().timeIntervalSince1970) * 1000
        let payload =
            #"{"notificationType":"TEST","notificationUUID":"6b1d6ee4-0000-4000-8000-000000000003","signedDate":\#(signedDate),"data":{"bundleId":"com.example.cli","environment":"Sandbox"}}"#
        let signed = try run(
            [
                "jws", "sign", "--key", "\(ca)/leaf.key.pem", "--chain",
                "\(ca)/leaf.der,\(ca)/intermediate.der,\(ca)/root.der",
            ], stdin: payload)
        #expect(signed.status == 0)
        let token = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let verify = [
            "verify", "--root", "\(ca)/root.der", "--bundle-id", "com.example.cli", "--environment", "Sandbox",
        ]
        #expect(
            try run(verify + ["--type", "renewal", "-"], stdin: token)
                == Run(
                    status: 1, stdout: "",
                    stderr:
                        "INVALID_JWT_FORMAT [format.payloadType]: expected a signed renewal info, but the payload is a notification\n"
                ))
        #expect(
            try run(verify + ["--type", "transaction", "-"], stdin: token)
                == Run(
                    status: 1, stdout: "",
                    stderr:
                        "INVALID_JWT_FORMAT [format.payloadType]: expected a signed transaction, but the payload is a notification\n"
                ))
        #expect(try run(verify + ["--type", "notification", "-"], stdin: token).status == 0)
    }

    @Test func jwsVerifyPrintsHeaderAndPayloadAsSignedAndRefusalsNameTheRule() throws {
        let directory = try temporaryDirectory()
        let key = try PrivateKey.generateP256()
        let privatePEM = directory.appendingPathComponent("key.pem").path
        let publicPEM = directory.appendingPathComponent("key.pub.pem").path
        try key.pkcs8PEM.write(toFile: privatePEM, atomically: true, encoding: .utf8)
        try key.publicKey.pem.write(toFile: publicPEM, atomically: true, encoding: .utf8)
        let payload = Array(#"{"bid":"com.example","iat":1700000000}"#.utf8)
        let token = try JWSSigner(key: key).sign(payload: payload, header: ["kid": "KEY1", "typ": "JWT"])
        let expected = Run(
            status: 0,
            stdout:
                #"{"header":{"alg":"ES256","kid":"KEY1","typ":"JWT"},"payload":{"bid":"com.example","iat":1700000000}}"#
                + "\n", stderr: "")
        #expect(try run(["jws", "verify", "--public-key", publicPEM, "-"], stdin: token) == expected)
        #expect(try run(["jws", "verify", "--public-key", privatePEM, "-"], stdin: token + "\n") == expected)

        let otherKey = try PrivateKey.generateP256().publicKey.pem
        let otherPEM = directory.appendingPathComponent("other.pub.pem").path
        try otherKey.write(toFile: otherPEM, atomically: true, encoding: .utf8)
        let p384 = directory.appendingPathComponent("p384.pub.pem").path
        try PrivateKey.generateEC(curve: "secp384r1").publicKey.pem.write(
            toFile: p384, atomically: true, encoding: .utf8)
        let hs256 = try TestSigning.token(header: #"{"alg":"HS256"}"#, payload: payload, key: key)
        let refusals: [(arguments: [String], stdin: String, stderr: String)] = [
            (
                ["--public-key", otherPEM], token,
                "VERIFICATION_FAILURE [signature.invalid]: JWS signature does not verify with the given key\n"
            ),
            (["--public-key", publicPEM], hs256, "INVALID_JWT_FORMAT [alg.notES256]: JWS alg is not ES256\n"),
            (
                ["--public-key", publicPEM], "a.b",
                "INVALID_JWT_FORMAT [format.partCount]: compact JWS has 2 parts, expected 3\n"
            ),
            (
                ["--public-key", publicPEM], token.replacingOccurrences(of: ".", with: "*."),
                "INVALID_JWT_FORMAT [format.base64]: a JWS part is not unpadded base64url\n"
            ),
            (["--public-key", p384], token, "INVALID_KEY [key.notP256]: ES256 needs an EC P-256 public key\n"),
        ]
        for refusal in refusals {
            let result = try run(["jws", "verify"] + refusal.arguments + ["-"], stdin: refusal.stdin)
            #expect(result == Run(status: 1, stdout: "", stderr: refusal.stderr))
        }
    }

    @Test(.enabled(if: Conformance.isAvailable, "conformance corpus absent"))
    func xcodeReceiptDecodesToExactJSON() throws {
        let decoded = try run(["receipt", "decode", Conformance.url("xcode/xcode-app-receipt-empty").path])
        #expect(decoded.status == 0)
        #expect(
            decoded.stdout == """
                {
                  "appItemId" : 0,
                  "applicationVersion" : "1",
                  "bundleId" : "com.example.naturelab.backyardbirds.example",
                  "expirationDate" : 64092211200000,
                  "inApp" : [

                  ],
                  "opaqueValue" : "0bz+zwQAAAA=",
                  "receiptCreationDate" : 1697678334000,
                  "receiptType" : "Xcode",
                  "sha1Hash" : "e271302b6e16c5984a8b43d21936205a85ce22a3",
                  "transactionIds" : [

                  ]
                }

                """)
    }

    @Test(.enabled(if: Conformance.isAvailable, "conformance corpus absent"))
    func xcodeTransactionVerifiesOnlyWhenXcodeIsExplicit() throws {
        let file = Conformance.url("xcode/xcode-signed-transaction").path
        let xcode = try run([
            "verify", "--environment", "Xcode", "--bundle-id", "com.example.naturelab.backyardbirds.example", file,
        ])
        #expect(xcode.status == 0)
        #expect(xcode.stdout.contains("\"purchaseDate\" : 1697679936049,"))
        let sandbox = try run([
            "verify", "--environment", "Sandbox", "--bundle-id", "com.example.naturelab.backyardbirds.example",
            "--root", Conformance.url("certs/testCA.der").path, file,
        ])
        #expect(
            sandbox
                == Run(
                    status: 1, stdout: "",
                    stderr: "INVALID_CERTIFICATE [chain.length]: x5c has 1 certificates, expected 3\n"))
    }
}
