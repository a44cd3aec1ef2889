import AppStoreModels
import AppStoreTrust
import Foundation
import Storage
import StorekeeperTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `storekeeper secrets …` and `storekeeper serve`'s startup check, run as the real binary:
/// exact output and exit codes for sealing a database from before sealing, a missing key, a
/// wrong key, an insecure key file and a rotation, then a server started with the new key only.
struct SecretsCLITests {
    /// Bytes 0...31 and 32...63, as base64, with their key ids.
    static let keyA = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
    static let keyAId = "389009c01dad4680"
    static let keyB = "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8="
    static let keyBId = "5ec442d1b6c58428"
    static let hint =
        "set STOREKEEPER_SECRETS_KEY (base64 of 32 bytes) or STOREKEEPER_SECRETS_KEY_FILE "
        + "(secretsKey / secretsKeyFile in the config file); `storekeeper secrets new-key FILE` writes one"

    struct Run: Equatable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The test's own environment without any `STOREKEEPER_` variable, plus `extra`.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STOREKEEPER_") }.merging(extra) { $1 }
    }

    func run(_ arguments: [String], environment extra: [String: String] = [:]) throws -> Run {
        let process = Process()
        process.executableURL = CLITests.binary
        process.arguments = arguments
        process.environment = environment(extra)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // A server that starts when it should have refused must fail the test, not hang it.
        let deadline = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: deadline)
        defer { deadline.cancel() }
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    func writeKey(_ text: String, to path: String, mode: Int = 0o600) throws {
        _ = FileManager.default.createFile(atPath: path, contents: Data((text + "\n").utf8))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    /// A database from before sealing: one app with a shared secret and an App Store Connect
    /// key, and a webhook endpoint, all in clear.
    func seedClearDatabase(_ path: String) async throws {
        let store = try await SQLiteStore.open(path: path)
        let pem = try PrivateKey.generateP256().pkcs8PEM
        try await store.write { transaction in
            try transaction.saveApp(
                AppRecord(
                    id: "cli-app", bundleId: "com.example", environments: [.sandbox],
                    sharedSecret: "cli-shared-secret-0000",
                    settings: .object([
                        "appStoreConnect": .object([
                            "keyId": .string("KEY0000001"), "issuerId": .string("issuer"),
                            "privateKeyPEM": .string(pem),
                        ])
                    ])), at: TestSigning.signedDate)
            try transaction.saveWebhookEndpoint(
                WebhookEndpoint(
                    id: "we_cli", appId: "cli-app", url: "http://127.0.0.1:9/", secret: "cli-webhook-secret-0000"),
                at: TestSigning.signedDate)
        }
        await store.close()
    }

    @Test func sealRefuseRotateAndServeWithTheNewKeyOnly() async throws {
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("store.sqlite").path
        let keyA = directory.appendingPathComponent("a.key").path
        let keyB = directory.appendingPathComponent("b.key").path
        try writeKey(Self.keyA, to: keyA)
        try writeKey(Self.keyB, to: keyB)
        try await seedClearDatabase(database)
        let serve = ["serve", "--database", database, "--listen", "127.0.0.1:0"]

        #expect(
            try run(["secrets", "status", "--database", database])
                == Run(status: 0, stdout: "configured key: none\nin clear: 3\n", stderr: ""))

        // Seal the clear values under key A, given by the environment (one source only).
        let twice = try run(
            ["secrets", "rotate", "--new-key-file", keyA, "--database", database],
            environment: ["STOREKEEPER_SECRETS_NEW_KEY": Self.keyA])
        #expect(twice.status == 2)
        #expect(
            twice.stderr.hasPrefix(
                "give the new key with --new-key-file or STOREKEEPER_SECRETS_NEW_KEY (one of them)\n"))
        #expect(
            try run(
                ["secrets", "rotate", "--database", database], environment: ["STOREKEEPER_SECRETS_NEW_KEY": Self.keyA])
                == Run(
                    status: 0,
                    stdout: """
                        sealed 3 secrets under key \(Self.keyAId); 3 stored secrets are under it
                        next: configure the new key for every server (STOREKEEPER_SECRETS_KEY_FILE) and restart them

                        """, stderr: ""))

        // No key: the server refuses to start.
        #expect(
            try run(serve)
                == Run(
                    status: 78, stdout: "",
                    stderr: #"{"code":"secrets.keyMissing","error":"the database holds 3 sealed secrets (key "#
                        + Self.keyAId + #") and no secrets key is configured","event":"server.secretsUnavailable","#
                        + #""hint":""# + Self.hint + "\"}\n"))

        // The wrong key: named, not used.
        #expect(
            try run(serve, environment: ["STOREKEEPER_SECRETS_KEY": Self.keyB])
                == Run(
                    status: 78, stdout: "",
                    stderr: #"{"code":"secrets.unknownKey","error":"the database holds 3 secrets sealed under key "#
                        + Self.keyAId + ", which is not the configured key (" + Self.keyBId
                        + #")","event":"server.secretsUnavailable","hint":"configure the key these secrets were "#
                        + #"sealed with, or rotate them: storekeeper secrets rotate"}"# + "\n"))

        // A key file other users can read is refused before anything else.
        let open = directory.appendingPathComponent("open.key").path
        try writeKey(Self.keyA, to: open, mode: 0o644)
        #expect(
            try run(serve, environment: ["STOREKEEPER_SECRETS_KEY_FILE": open])
                == Run(
                    status: 78, stdout: "",
                    stderr: #"{"code":"secrets.keyFileInsecure","error":"the secrets key file "# + open
                        + " is accessible to other users (mode 644); run chmod 600 " + open
                        + #"","event":"server.secretsUnavailable"}"# + "\n"))

        // A key of the wrong length is a configuration error that does not echo it.
        #expect(
            try run(serve, environment: ["STOREKEEPER_SECRETS_KEY": "c2hvcnQ="])
                == Run(
                    status: 2, stdout: "",
                    stderr:
                        "error: config.invalidValue: secretsKey from STOREKEEPER_SECRETS_KEY must be the base64 (44 characters) or hex (64 characters) of 32 random bytes; it decodes to 5 bytes\n"
                ))

        // Rotation needs the old key: without it nothing is written.
        #expect(
            try run(["secrets", "rotate", "--new-key-file", keyB, "--database", database])
                == Run(
                    status: 78, stdout: "",
                    stderr: "error: secrets.unknownKey: apps/cli-app/sharedSecret is sealed under key \(Self.keyAId), "
                        + "which is not the configured key (\(Self.keyBId))\n"))
        #expect(
            try run(
                ["secrets", "rotate", "--new-key-file", keyB, "--database", database],
                environment: ["STOREKEEPER_SECRETS_KEY_FILE": keyA]
            ).stdout.hasPrefix("sealed 3 secrets under key \(Self.keyBId); 3 stored secrets are under it\n"))
        #expect(
            try run(["secrets", "status", "--database", database], environment: ["STOREKEEPER_SECRETS_KEY_FILE": keyB])
                == Run(
                    status: 0,
                    stdout: "configured key: \(Self.keyBId)\nin clear: 0\nsealed under key \(Self.keyBId): 3\n",
                    stderr: ""))
        // The old key alone no longer starts the server.
        #expect(try run(serve, environment: ["STOREKEEPER_SECRETS_KEY_FILE": keyA]).status == 78)

        // The new key alone serves, and the shared secret opened with it authenticates a V1 notification.
        try await serveBriefly(serve, environment: ["STOREKEEPER_SECRETS_KEY_FILE": keyB]) { baseURL throws in
            var request = URLRequest(url: URL(string: baseURL + "/v1/apps/cli-app/notifications/appstore")!)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            func post(_ password: String) async throws -> Int {
                request.httpBody = try JSONSerialization.data(withJSONObject: [
                    "notification_type": "DID_CHANGE_RENEWAL_STATUS", "password": password, "environment": "Sandbox",
                    "bid": "com.example",
                ])
                return (try await URLSession.shared.data(for: request).1 as! HTTPURLResponse).statusCode
            }
            #expect(try await post("not-the-secret") == 401)
            #expect(try await post("cli-shared-secret-0000") == 200)
        }
    }

    @Test func newKeyWritesAnOwnerOnlyFileOnce() throws {
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("new.key").path
        let created = try run(["secrets", "new-key", path])
        #expect(created.status == 0)
        #expect(created.stderr == "")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.utf8.count == 45)
        #expect(Data(base64Encoded: String(text.dropLast()))?.count == 32)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(created.stdout.hasPrefix("wrote a new secrets key to \(path) (key "))
        #expect(created.stdout.hasSuffix(", mode 600)\n"))
        #expect(
            try run(["secrets", "new-key", path])
                == Run(
                    status: 1, stdout: "",
                    stderr: "error: secrets.keyFileExists: \(path) exists; a secrets key file is never overwritten\n"))
        #expect(text == (try String(contentsOfFile: path, encoding: .utf8)))
        #expect(try run(["secrets"]).status == 2)
        #expect(try run(["secrets", "frobnicate"]).status == 2)
        #expect(try run(["secrets", "rotate", "--database", path]).status == 2)
    }

    /// Starts `storekeeper serve`, waits for its listening line, runs `body` with its base URL,
    /// then stops it with SIGTERM and expects exit 0; returns what it logged.
    @discardableResult
    func serveBriefly(
        _ arguments: [String], environment extra: [String: String],
        _ body: (String) async throws -> Void
    ) async throws -> String {
        let process = Process()
        process.executableURL = CLITests.binary
        process.arguments = arguments
        process.environment = environment(extra.merging(["STOREKEEPER_ACCESS_LOG": "false"]) { $1 })
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { process.terminate() }
        }
        let output = ChildOutput(err.fileHandleForReading)
        var baseURL: String?
        for _ in 0..<600 where baseURL == nil {
            let text = output.text
            if let line = text.split(separator: "\n").first(where: { $0.contains("server.listening") }),
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
            {
                baseURL = object["url"]
                // The version `--version` prints (`StorekeeperVersion`), logged at start.
                #expect(object["version"] == "0.1.0")
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let url = try #require(baseURL, "no listening line: \(output.text)")
        try await body(url)
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let logged = await output.all()
        #expect(!logged.contains("secrets."))
        return logged
    }
}
