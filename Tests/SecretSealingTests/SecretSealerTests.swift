import Foundation
import Testing

@testable import SecretSealing

/// Sealing and opening: the format, the key id, refusals of a wrong key, an altered value and
/// a value moved to another field.
struct SecretSealerTests {
    /// Bytes 0...31 and 32...63: fixed keys whose ids and seals were computed independently
    /// (Python `cryptography`, SHA-256 and AES-GCM).
    static let keyA = try! SecretsKey(bytes: Array(0..<32))
    static let keyB = try! SecretsKey(bytes: Array(32..<64))
    static let binding = SecretBinding("apps", "demo", "sharedSecret")

    @Test func keyIdIsAShortHashOfTheKey() throws {
        #expect(Self.keyA.id == "389009c01dad4680")
        #expect(Self.keyB.id == "5ec442d1b6c58428")
        #expect(Self.keyA.description == "SecretsKey(id: 389009c01dad4680)")
        #expect("\(Self.keyA)".contains("AAECAw") == false)
    }

    @Test func sealedValueIsVersionedAndNamesItsKey() throws {
        let sealer = SecretSealer(key: Self.keyA)
        let first = try sealer.seal("shared-secret", binding: Self.binding)
        let second = try sealer.seal("shared-secret", binding: Self.binding)
        #expect(first.hasPrefix("sk1:389009c01dad4680:"))
        #expect(first != second, "a fresh nonce per seal")
        let body = try #require(Data(base64Encoded: String(first.dropFirst("sk1:389009c01dad4680:".count))))
        #expect(body.count == 12 + "shared-secret".utf8.count + 16)
        #expect(!first.contains("shared-secret"))
        #expect(try sealer.open(first, binding: Self.binding) == "shared-secret")
        #expect(try sealer.open(second, binding: Self.binding) == "shared-secret")
    }

    /// Sealed by Python's `cryptography` with the documented format and associated data
    /// (nonce 0...11): the format is what docs/server.md says, not just what this code does.
    @Test func opensAValueSealedByAnIndependentImplementation() throws {
        let sealed = "sk1:389009c01dad4680:AAECAwQFBgcICQoLNGq3aaCB72joIuXuxaMdw6ldjpXb/StNop5WsAg="
        #expect(try SecretSealer(key: Self.keyA).open(sealed, binding: Self.binding) == "shared-secret")
    }

    /// NIST GCM test case 16 (AES-256, 96-bit IV, associated data).
    @Test func aesGCMMatchesTheStandardVector() throws {
        let key = hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let nonce = hex("cafebabefacedbaddecaf888")
        let plaintext = hex(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
        )
        let aad = hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let (ciphertext, tag) = try AESGCM.seal(key: key, nonce: nonce, plaintext: plaintext, associatedData: aad)
        #expect(
            ciphertext
                == hex(
                    "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
                ))
        #expect(tag == hex("76fc6ece0f4e1768cddf8853bb2d551b"))
        #expect(
            try AESGCM.open(key: key, nonce: nonce, ciphertext: ciphertext, tag: tag, associatedData: aad)
                == plaintext)
    }

    @Test func emptySecretRoundTrips() throws {
        let sealer = SecretSealer(key: Self.keyA)
        #expect(try sealer.open(try sealer.seal("", binding: Self.binding), binding: Self.binding) == "")
    }

    @Test func wrongKeyIsNamedNotDecryptedToGarbage() throws {
        let sealed = try SecretSealer(key: Self.keyA).seal("shared-secret", binding: Self.binding)
        let error = #expect(throws: SecretsError.self) {
            try SecretSealer(key: Self.keyB).open(sealed, binding: Self.binding)
        }
        #expect(
            error
                == SecretsError(
                    .unknownKey,
                    "apps/demo/sharedSecret is sealed under key 389009c01dad4680, which is not the configured key (5ec442d1b6c58428)"
                ))
    }

    /// A value relabelled with the id of the key that is configured still fails: the key id is
    /// authenticated, and the wrong key cannot produce the tag.
    @Test func relabelledKeyIdFailsAuthentication() throws {
        let sealed = try SecretSealer(key: Self.keyA).seal("shared-secret", binding: Self.binding)
        let relabelled = sealed.replacingOccurrences(of: Self.keyA.id, with: Self.keyB.id)
        let error = #expect(throws: SecretsError.self) {
            try SecretSealer(key: Self.keyB).open(relabelled, binding: Self.binding)
        }
        #expect(error?.code == .authenticationFailed)
    }

    @Test(arguments: [0, 5, 11, 12, 20, 24, 40])
    func tamperedByteAnywhereIsRefusedByTheTag(offset: Int) throws {
        let sealer = SecretSealer(key: Self.keyA)
        let sealed = try sealer.seal("shared-secret", binding: Self.binding)
        let prefix = "sk1:\(Self.keyA.id):"
        var body = Array(try #require(Data(base64Encoded: String(sealed.dropFirst(prefix.count)))))
        #expect(body.count == 41)
        body[offset] ^= 0x01
        let tampered = prefix + Data(body).base64EncodedString()
        let error = #expect(throws: SecretsError.self) { try sealer.open(tampered, binding: Self.binding) }
        #expect(
            error
                == SecretsError(
                    .authenticationFailed,
                    "apps/demo/sharedSecret failed authentication under key 389009c01dad4680: it was altered or belongs to another field"
                ))
    }

    @Test func valueMovedToAnotherAppOrFieldIsRefused() throws {
        let sealer = SecretSealer(key: Self.keyA)
        let sealed = try sealer.seal("shared-secret", binding: Self.binding)
        for other in [
            SecretBinding("apps", "other", "sharedSecret"),
            SecretBinding("apps", "demo", "appStoreConnect.privateKeyPEM"),
            // Length prefixes: the same characters split differently are another binding.
            SecretBinding("apps", "demos", "haredSecret"),
        ] {
            #expect(throws: SecretsError.self) { try sealer.open(sealed, binding: other) }
        }
    }

    @Test func olderKeysOpenWhatTheyHaveSealed() throws {
        let old = try SecretSealer(key: Self.keyA).seal("shared-secret", binding: Self.binding)
        let rotating = SecretSealer(key: Self.keyB, alsoOpening: [Self.keyA])
        #expect(rotating.keyIds == [Self.keyA.id, Self.keyB.id])
        #expect(try rotating.open(old, binding: Self.binding) == "shared-secret")
        #expect(try rotating.seal("x", binding: Self.binding).hasPrefix("sk1:5ec442d1b6c58428:"))
    }

    @Test(arguments: [
        ("sk1:389009c01dad4680", SecretsError.Code.malformed),
        ("sk1:389009C01DAD4680:AAECAwQFBgcICQoLNGq3aaCB72joIuXuxaMdw6ldjpXb", .malformed),
        ("sk1:389009c01dad4680:not base64!", .malformed),
        ("sk1:389009c01dad4680:AAECAwQFBgcICQoL", .malformed),
        ("sk2:389009c01dad4680:AAECAwQFBgcICQoLNGq3aaCB72joIuXuxaMdw6ldjpXb", .malformed),
        ("sk1:389009c01dad4680:" + String(repeating: "A", count: 100_000), .tooLarge),
    ])
    func malformedValuesAreRefused(text: String, code: SecretsError.Code) throws {
        let error = #expect(throws: SecretsError.self) {
            try SecretSealer(key: Self.keyA).open(text, binding: Self.binding)
        }
        #expect(error?.code == code)
        #expect(error?.message.hasPrefix("apps/demo/sharedSecret: ") == true)
    }

    @Test func oversizedSecretIsRefused() throws {
        let error = #expect(throws: SecretsError.self) {
            try SecretSealer(key: Self.keyA).seal(String(repeating: "x", count: 64 * 1024 + 1), binding: Self.binding)
        }
        #expect(error == SecretsError(.tooLarge, "apps/demo/sharedSecret is longer than 65536 bytes"))
    }

    func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map { offset in
            let start = text.index(text.startIndex, offsetBy: offset)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
        }
    }
}
