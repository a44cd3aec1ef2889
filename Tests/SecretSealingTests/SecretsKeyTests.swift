import Foundation
import Testing

@testable import SecretSealing

/// Where a key comes from: text (`STOREKEEPER_SECRETS_KEY`) and key files.
struct SecretsKeyTests {
    @Test func base64AndHexOfThirtyTwoBytesAreTheSameKey() throws {
        let base64 = try SecretsKey(encoded: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n", source: "test")
        let hex = try SecretsKey(
            encoded: " 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f ", source: "test")
        let upper = try SecretsKey(
            encoded: "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F", source: "test")
        #expect(base64.id == "389009c01dad4680")
        #expect(hex.id == "389009c01dad4680")
        #expect(upper.id == "389009c01dad4680")
        #expect(base64.base64 == "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
    }

    @Test(arguments: [
        (
            "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd",
            "STOREKEEPER_SECRETS_KEY must be the base64 (44 characters) or hex (64 characters) of 32 random bytes; it decodes to 30 bytes"
        ),
        (
            "000102030405060708090a0b0c0d0e0f",
            "STOREKEEPER_SECRETS_KEY must be the base64 (44 characters) or hex (64 characters) of 32 random bytes; it decodes to 24 bytes"
        ),
        (
            "correct horse battery staple",
            "STOREKEEPER_SECRETS_KEY must be the base64 (44 characters) or hex (64 characters) of 32 random bytes; it is neither"
        ),
        (
            String(repeating: "A", count: 300),
            "STOREKEEPER_SECRETS_KEY must be the base64 (44 characters) or hex (64 characters) of 32 random bytes; it is 300 characters long"
        ),
    ])
    func otherLengthsAreRefusedWithoutEchoingTheValue(text: String, message: String) throws {
        let error = #expect(throws: SecretsError.self) {
            try SecretsKey(encoded: text, source: "STOREKEEPER_SECRETS_KEY")
        }
        #expect(error == SecretsError(.keyInvalid, message))
    }

    @Test func generatedKeysDiffer() throws {
        let first = try SecretsKey.generate()
        let second = try SecretsKey.generate()
        #expect(first.id != second.id)
        #expect(first.id.utf8.count == 16)
        #expect(try SecretsKey(encoded: first.base64, source: "test").id == first.id)
    }

    @Test func createdKeyFileIsOwnerOnlyAndReadsBack() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("secrets.key").path
        let created = try SecretsKeyFile.create(path)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == created.base64 + "\n")
        #expect(try SecretsKeyFile.read(path).id == created.id)
        let again = #expect(throws: SecretsError.self) { try SecretsKeyFile.create(path) }
        #expect(again == SecretsError(.keyFileExists, "\(path) exists; a secrets key file is never overwritten"))
        let (reused, wasCreated) = try SecretsKeyFile.readOrCreate(path)
        #expect(reused.id == created.id)
        #expect(!wasCreated)
    }

    @Test(arguments: [0o644, 0o604, 0o602, 0o601])
    func keyFileOtherUsersCanReachIsRefused(mode: Int) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("secrets.key").path
        _ = try SecretsKeyFile.create(path)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        let error = #expect(throws: SecretsError.self) { try SecretsKeyFile.read(path) }
        #expect(
            error
                == SecretsError(
                    .keyFileInsecure,
                    "the secrets key file \(path) is accessible to other users (mode \(String(mode, radix: 8))); run chmod 600 \(path)"
                ))
    }

    @Test func groupReadableKeyFileIsAccepted() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("secrets.key").path
        let created = try SecretsKeyFile.create(path)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        #expect(try SecretsKeyFile.read(path).id == created.id)
    }

    @Test func missingOversizedAndWrongKeyFilesAreRefused() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("none.key").path
        let unreadable = #expect(throws: SecretsError.self) { try SecretsKeyFile.read(missing) }
        #expect(
            unreadable
                == SecretsError(
                    .keyFileUnreadable, "cannot open the secrets key file \(missing): No such file or directory"))

        let large = directory.appendingPathComponent("large.key").path
        _ = FileManager.default.createFile(
            atPath: large, contents: Data(repeating: 0x41, count: 2000), attributes: [.posixPermissions: 0o600])
        let oversized = #expect(throws: SecretsError.self) { try SecretsKeyFile.read(large) }
        #expect(oversized == SecretsError(.keyInvalid, "the secrets key file \(large) is larger than 1024 bytes"))

        let short = directory.appendingPathComponent("short.key").path
        _ = FileManager.default.createFile(
            atPath: short, contents: Data("c2hvcnQ=\n".utf8), attributes: [.posixPermissions: 0o600])
        let invalid = #expect(throws: SecretsError.self) { try SecretsKeyFile.read(short) }
        #expect(
            invalid
                == SecretsError(
                    .keyInvalid,
                    "the secrets key file \(short) must be the base64 (44 characters) or hex (64 characters) of 32 random bytes; it decodes to 5 bytes"
                ))

        let notFile = #expect(throws: SecretsError.self) { try SecretsKeyFile.read(directory.path) }
        #expect(
            notFile == SecretsError(.keyFileUnreadable, "the secrets key file \(directory.path) is not a regular file"))
    }

    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
