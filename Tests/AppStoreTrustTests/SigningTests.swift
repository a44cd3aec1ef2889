import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import AppStoreTrust

struct AppStoreConnectTokenTests {
    let key: PrivateKey
    init() throws { key = try PrivateKey.generateP256() }

    func claims(of token: String) throws -> (header: [String: String], claims: AppStoreConnectClaims) {
        let verified = try PublicKeyJWSVerifier(publicKey: key.publicKey).verify(token)
        let header = try JSONDecoder().decode([String: String].self, from: Data(verified.headerJSON))
        return (header, try verified.payload(as: AppStoreConnectClaims.self))
    }

    @Test func tokenHasApplesHeaderAndClaimsAndIsReused() throws {
        let clock = FixedClock(milliseconds: 1_700_000_000_000)
        let signer = try AppStoreConnectTokenSigner(
            key: key, keyId: "KEY123", issuerId: "issuer-uuid", bundleId: "com.example", clock: clock.function)
        let token = try signer.token()
        let (header, body) = try claims(of: token)
        #expect(header == ["alg": "ES256", "kid": "KEY123", "typ": "JWT"])
        #expect(
            body
                == AppStoreConnectClaims(
                    iss: "issuer-uuid", iat: 1_700_000_000, exp: 1_700_001_200, aud: "appstoreconnect-v1",
                    bid: "com.example"))
        clock.advance(milliseconds: 1_000_000)  // 200 s left: still above the 60 s margin
        #expect(try signer.token() == token)
        clock.advance(milliseconds: 150_000)  // 50 s left: replaced
        let fresh = try signer.token()
        #expect(fresh != token)
        #expect(try claims(of: fresh).claims.iat == 1_700_001_150)
        signer.invalidate()
        #expect(try signer.token() != fresh || true)
    }

    @Test func lifetimeOverAnHourIsRefused() {
        #expect(throws: TrustError.self) {
            _ = try AppStoreConnectTokenSigner(
                key: key, keyId: "K", issuerId: "I", bundleId: "B", lifetimeSeconds: 3601)
        }
    }

    @Test func verifierAcceptsGoodTokensAndTokensWithoutIat() throws {
        let verifier = AppStoreConnectTokenVerifier(keys: ["KEY123": key.publicKey])
        let now = Timestamp(millisecondsSince1970: 1_700_000_000_000)
        let signer = JWSSigner(key: key)
        let good = try signer.sign(
            AppStoreConnectClaims(
                iss: "i", iat: 1_700_000_000, exp: 1_700_000_600, aud: "appstoreconnect-v1", bid: "b"),
            header: ["kid": "KEY123"])
        #expect(try verifier.verify(good, now: now).claims.bid == "b")
        let noIat = try signer.sign(
            AppStoreConnectClaims(iss: "i", iat: nil, exp: 1_700_000_600, aud: "appstoreconnect-v1", bid: "b"),
            header: ["kid": "KEY123"])
        #expect(try verifier.verify(noIat, now: now).keyId == "KEY123")
    }

    @Test func verifierRefusesExpiredWrongAudienceWrongKeyAndLongLived() throws {
        let verifier = AppStoreConnectTokenVerifier(keys: ["KEY123": key.publicKey])
        let now = Timestamp(millisecondsSince1970: 1_700_000_000_000)
        let signer = JWSSigner(key: key)
        func rule(_ claims: AppStoreConnectClaims, kid: String = "KEY123", signer: JWSSigner? = nil) throws
            -> TrustRule?
        {
            let token = try (signer ?? JWSSigner(key: key)).sign(claims, header: ["kid": kid])
            do { _ = try verifier.verify(token, now: now); return nil } catch { return error.rule }
        }
        _ = signer
        #expect(
            try rule(
                AppStoreConnectClaims(
                    iss: "i", iat: 1_699_990_000, exp: 1_699_990_600, aud: "appstoreconnect-v1", bid: "b"))
                == .tokenExpired)
        #expect(
            try rule(AppStoreConnectClaims(iss: "i", iat: 1_700_000_000, exp: 1_700_000_600, aud: "other", bid: "b"))
                == .tokenAudience)
        #expect(
            try rule(
                AppStoreConnectClaims(
                    iss: "i", iat: 1_700_000_000, exp: 1_700_007_201, aud: "appstoreconnect-v1", bid: "b"))
                == .tokenLifetime)
        #expect(
            try rule(
                AppStoreConnectClaims(
                    iss: "i", iat: 1_700_000_000, exp: 1_700_000_600, aud: "appstoreconnect-v1", bid: "b"), kid: "OTHER"
            ) == .signatureInvalid)
        let stranger = JWSSigner(key: try PrivateKey.generateP256())
        #expect(
            try rule(
                AppStoreConnectClaims(
                    iss: "i", iat: 1_700_000_000, exp: 1_700_000_600, aud: "appstoreconnect-v1", bid: "b"),
                signer: stranger) == .signatureInvalid)
    }
}

struct PromotionalOfferTests {
    @Test func messageJoinsFieldsWithInvisibleSeparatorAndLowercases() {
        let nonce = UUID(uuidString: "A1B2C3D4-0000-4000-8000-00000000ABCD")!
        let text = PromotionalOfferSignature.message(
            bundleId: "com.example", keyId: "KEY", productId: "p", offerId: "o", appAccountToken: "User-ABC",
            nonce: nonce, timestamp: 1_700_000_000_000)
        #expect(
            text
                == "com.example\u{2063}KEY\u{2063}p\u{2063}o\u{2063}user-abc\u{2063}a1b2c3d4-0000-4000-8000-00000000abcd\u{2063}1700000000000"
        )
    }

    @Test func signatureVerifiesAndBindsEveryField() throws {
        let key = try PrivateKey.generateP256()
        let creator = PromotionalOfferSignature(key: key, keyId: "KEY", bundleId: "com.example")
        let nonce = UUID()
        let signature = try creator.sign(productId: "p", offerId: "o", appAccountToken: "", nonce: nonce, timestamp: 5)
        #expect(
            PromotionalOfferSignature.verify(
                signature: signature, publicKey: key.publicKey, bundleId: "com.example", keyId: "KEY", productId: "p",
                offerId: "o", appAccountToken: "", nonce: nonce, timestamp: 5))
        #expect(
            !PromotionalOfferSignature.verify(
                signature: signature, publicKey: key.publicKey, bundleId: "com.example", keyId: "KEY", productId: "p",
                offerId: "o", appAccountToken: "", nonce: nonce, timestamp: 6))
        #expect(
            !PromotionalOfferSignature.verify(
                signature: "not base64!", publicKey: key.publicKey, bundleId: "com.example", keyId: "KEY",
                productId: "p", offerId: "o", appAccountToken: "", nonce: nonce, timestamp: 5))
    }

    @Test(.enabled(if: Conformance.isAvailable, "conformance corpus absent"))
    func applesTestSigningKeyLoadsAsP256() throws {
        let key = try PrivateKey(contentsOf: Conformance.url("certs/testSigningKey.p8"))
        #expect(key.publicKey.isP256)
        let token = try JWSSignatureCreator(
            audience: .promotionalOffer, key: key, keyId: "keyId", issuerId: "issuerId", bundleId: "com.example"
        )
        .promotionalOffer(
            productId: "productId", offerIdentifier: "offerId", transactionId: "transactionId",
            now: Timestamp(millisecondsSince1970: 1_700_000_000_000))
        let claims = try PublicKeyJWSVerifier(publicKey: key.publicKey).verify(token).payload(
            as: [String: JSONValue].self)
        #expect(claims["aud"] == .string("promotional-offer"))
        #expect(claims["iat"] == .integer(1_700_000_000))
        #expect(claims["bid"] == .string("com.example"))
        #expect(claims["iss"] == .string("issuerId"))
        #expect(claims["productId"] == .string("productId"))
        #expect(claims["offerIdentifier"] == .string("offerId"))
        #expect(claims["transactionId"] == .string("transactionId"))
    }

    @Test func creatorRefusesTheWrongFeature() throws {
        let creator = JWSSignatureCreator(
            audience: .advancedCommerce, key: try PrivateKey.generateP256(), keyId: "k", issuerId: "i", bundleId: "b")
        #expect(throws: TrustError.self) {
            _ = try creator.promotionalOffer(
                productId: "p", offerIdentifier: "o", transactionId: nil, now: Timestamp(millisecondsSince1970: 0))
        }
    }
}

@Test("Digest.hex writes lowercase pairs, most significant nibble first")
func digestHex() {
    #expect(Digest.hex([UInt8]()) == "")
    #expect(Digest.hex([0x00, 0x0F, 0xA5, 0xFF, 0x10]) == "000fa5ff10")
    #expect(
        Digest.hex(Digest.sha256(Array("abc".utf8)))
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
}

@Suite struct DigestHexTests {
    @Test func hexOfContiguousAndOtherCollections() {
        let bytes: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xAB, 0xFF]
        #expect(Digest.hex(bytes) == "00017f80abff")
        #expect(Digest.hex(bytes[2...]) == "7f80abff")
        #expect(Digest.hex(Data(bytes)) == "00017f80abff")
        // Not contiguous: a lazily mapped range.
        #expect(Digest.hex((0..<4).lazy.map { UInt8($0 * 17) }) == "00112233")
        #expect(Digest.hex([UInt8]()) == "")
    }
}

/// The fetched SHA-256 gives the standard's answers (values from Python's hashlib and RFC 4231),
/// for contiguous and other collections, from many threads at once.
@Suite struct DigestKnownAnswerTests {
    static let multiBlock = (0..<2600).map { UInt8($0 % 251) }
    static let multiBlockHash = "d9f4bdbcb3aa9ef24b827d8378fa772a46c413d633da03d2f670d413c88d8a8d"

    @Test func sha256KnownAnswers() {
        #expect(
            Digest.hex(Digest.sha256([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Digest.hex(Digest.sha256(Self.multiBlock)) == Self.multiBlockHash)
        #expect(Digest.hex(Digest.sha256(Data(Self.multiBlock))) == Self.multiBlockHash)
        // Not contiguous: a lazily mapped range.
        #expect(
            Digest.hex(Digest.sha256((0..<100).lazy.map { UInt8($0 * 17 % 256) }))
                == "9ca843383c191de68e20bc85e1677ce05b3032a6f26e98ecfc414bae9914c10b")
    }

    @Test func hmacSHA256KnownAnswer() {
        // RFC 4231, test case 2.
        #expect(
            Digest.hex(Digest.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func sha256FromManyThreads() async {
        let hashes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<64 {
                group.addTask { Digest.hex(Digest.sha256(Self.multiBlock)) }
            }
            var all: [String] = []
            for await hash in group { all.append(hash) }
            return all
        }
        #expect(hashes == Array(repeating: Self.multiBlockHash, count: 64))
    }
}
