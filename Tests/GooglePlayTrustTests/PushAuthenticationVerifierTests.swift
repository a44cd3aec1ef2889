import AppStoreTrust
import Foundation
import Synchronization
import Testing

@testable import GooglePlayTrust

/// A key set served from memory, replaceable (rotation) and counting loads.
final class MemoryKeySetLoader: GoogleKeySetLoader {
    private let state: Mutex<(json: Data?, loads: Int)>

    init(_ json: Data?) { state = Mutex((json, 0)) }

    var origin: String { "memory" }
    var loads: Int { state.withLock { $0.loads } }

    func replace(_ json: Data?) { state.withLock { $0.json = json } }

    func loadKeySet() async throws(GooglePlayTrustError) -> Data {
        let json = state.withLock { state -> Data? in
            state.loads += 1
            return state.json
        }
        guard let json else { throw GooglePlayTrustError(.keySetUnavailable, "memory loader has no set") }
        return json
    }
}

/// RSA keys are slow to generate: the suite shares three.
enum TestKeys {
    static let google = try! RSAPrivateKey.generate()
    static let rotated = try! RSAPrivateKey.generate()
    static let attacker = try! RSAPrivateKey.generate()
}

struct PushAuthenticationVerifierTests {
    static let audience = "https://storekeeper.example.com/v1/apps/app-1/notifications/googleplay"
    static let email = "pubsub-push@my-project.iam.gserviceaccount.com"
    static let now = Date(timeIntervalSince1970: 1_714_557_600)

    static func claims(
        iss: String? = "https://accounts.google.com", aud: String? = audience, email: String? = email,
        verified: Bool? = true, iat: Int64? = 1_714_557_590, exp: Int64? = 1_714_561_190
    ) -> OIDCTokenClaims {
        OIDCTokenClaims(
            iss: iss, aud: aud.map { [$0] }, azp: "1234", sub: "1234", email: email, emailVerified: verified,
            iat: iat, exp: exp)
    }

    static func token(_ claims: OIDCTokenClaims = claims(), key: RSAPrivateKey = TestKeys.google, kid: String? = "k1")
        throws -> String
    {
        try RS256JWTSigner.sign(claims: claims, key: key, kid: kid)
    }

    static func verifier(_ loader: MemoryKeySetLoader) -> PushAuthenticationVerifier {
        PushAuthenticationVerifier(
            audience: audience, serviceAccountEmail: email,
            keys: GoogleKeySetCache(loader: loader, maximumAge: 3600, minimumRefetchInterval: 60))
    }

    static func keySet(_ entries: [(String, RSAPrivateKey)]) -> Data {
        GoogleKeySet.json(of: entries.map { ($0.0, $0.1.publicKey) })
    }

    /// The rule a verification refuses with.
    static func refusal(_ verifier: PushAuthenticationVerifier, _ authorization: String?, at now: Date = now) async
        -> PlayTrustRule?
    {
        do {
            _ = try await verifier.verify(authorization: authorization, now: now)
            return nil
        } catch {
            return error.rule
        }
    }

    @Test func validTokenVerifiesAndYieldsItsClaims() async throws {
        let verifier = Self.verifier(MemoryKeySetLoader(Self.keySet([("k1", TestKeys.google)])))
        let verified = try await verifier.verify(authorization: "Bearer " + Self.token(), now: Self.now)
        #expect(verified.kid == "k1")
        #expect(verified.claims == Self.claims())
        let bareIssuer = try Self.token(Self.claims(iss: "accounts.google.com"))
        #expect(
            try await verifier.verify(authorization: "bearer " + bareIssuer, now: Self.now).claims.iss
                == "accounts.google.com")
    }

    @Test func everyRefusalHasItsRule() async throws {
        let verifier = Self.verifier(MemoryKeySetLoader(Self.keySet([("k1", TestKeys.google)])))
        func header(_ claims: OIDCTokenClaims) throws -> String { "Bearer " + (try Self.token(claims)) }
        #expect(await Self.refusal(verifier, nil) == .tokenMissing)
        #expect(await Self.refusal(verifier, "") == .tokenMissing)
        #expect(await Self.refusal(verifier, "Basic dXNlcjpwYXNz") == .notBearer)
        #expect(await Self.refusal(verifier, "Bearer a.b") == .partCount)
        #expect(await Self.refusal(verifier, "Bearer a!.b.c") == .base64)
        // Expired beyond the 60 s leeway; within it still accepted.
        #expect(
            await Self.refusal(verifier, try header(Self.claims(iat: 1_714_550_000, exp: 1_714_557_539))) == .expired)
        #expect(await Self.refusal(verifier, try header(Self.claims(iat: 1_714_550_000, exp: 1_714_557_541))) == nil)
        #expect(await Self.refusal(verifier, try header(Self.claims(iat: 1_714_557_661))) == .issuedInFuture)
        #expect(await Self.refusal(verifier, try header(Self.claims(exp: nil))) == .timeClaimMissing)
        #expect(
            await Self.refusal(verifier, try header(Self.claims(aud: "https://other.example.com"))) == .audienceMismatch
        )
        #expect(await Self.refusal(verifier, try header(Self.claims(aud: nil))) == .audienceMismatch)
        #expect(
            await Self.refusal(verifier, try header(Self.claims(iss: "https://evil.example.com"))) == .issuerMismatch)
        #expect(await Self.refusal(verifier, try header(Self.claims(iss: nil))) == .issuerMismatch)
        #expect(
            await Self.refusal(verifier, try header(Self.claims(email: "other@x.iam.gserviceaccount.com")))
                == .emailMismatch)
        #expect(await Self.refusal(verifier, try header(Self.claims(verified: false))) == .emailNotVerified)
        #expect(await Self.refusal(verifier, try header(Self.claims(verified: nil))) == .emailNotVerified)
        // Signed by another key under Google's kid.
        #expect(await Self.refusal(verifier, "Bearer " + (try Self.token(key: TestKeys.attacker))) == .signatureInvalid)
        #expect(await Self.refusal(verifier, "Bearer " + (try Self.token(kid: nil))) == .kidMissing)
    }

    @Test func claimsOfAForgedTokenAreNeverRead() async throws {
        // A token whose payload was swapped after signing: the signature check comes first.
        let verifier = Self.verifier(MemoryKeySetLoader(Self.keySet([("k1", TestKeys.google)])))
        let genuine = try Self.token().split(separator: ".")
        let forgedClaims = Base64URL.encode(Array(#"{"iss":"https://accounts.google.com"}"#.utf8))
        let forged = "Bearer \(genuine[0]).\(forgedClaims).\(genuine[2])"
        #expect(await Self.refusal(verifier, forged) == .signatureInvalid)
    }

    @Test func algorithmsOtherThanRS256AreRefusedByName() async throws {
        let verifier = Self.verifier(MemoryKeySetLoader(Self.keySet([("k1", TestKeys.google)])))
        let payload = Base64URL.encode(Array(GooglePlayJSONForTests.encode(Self.claims())))
        func token(header: String, signature: String) -> String {
            "Bearer " + Base64URL.encode(Array(header.utf8)) + "." + payload + "." + signature
        }
        #expect(
            await Self.refusal(verifier, token(header: #"{"alg":"none","kid":"k1"}"#, signature: "")) == .algorithmNone)
        #expect(
            await Self.refusal(verifier, token(header: #"{"alg":"None","kid":"k1"}"#, signature: "")) == .algorithmNone)
        #expect(
            await Self.refusal(verifier, token(header: #"{"alg":"HS256","kid":"k1"}"#, signature: "AAAA"))
                == .algorithmNotRS256)
        #expect(
            await Self.refusal(verifier, token(header: #"{"alg":"ES256","kid":"k1"}"#, signature: "AAAA"))
                == .algorithmNotRS256)
        #expect(await Self.refusal(verifier, token(header: #"{"kid":"k1"}"#, signature: "AAAA")) == .algorithmNotRS256)
        #expect(await Self.refusal(verifier, token(header: "[1]", signature: "AAAA")) == .headerNotJSON)
    }

    @Test func unknownKidTriggersOneRefetchAndRotationIsFollowed() async throws {
        let loader = MemoryKeySetLoader(Self.keySet([("k1", TestKeys.google)]))
        let verifier = Self.verifier(loader)
        #expect(await Self.refusal(verifier, "Bearer " + (try Self.token())) == nil)
        #expect(loader.loads == 1)

        // Google publishes k2 and starts signing with it: the first token under k2 refetches.
        loader.replace(Self.keySet([("k1", TestKeys.google), ("k2", TestKeys.rotated)]))
        let rotatedToken = "Bearer " + (try Self.token(key: TestKeys.rotated, kid: "k2"))
        #expect(await Self.refusal(verifier, rotatedToken, at: Self.now.addingTimeInterval(61)) == nil)
        #expect(loader.loads == 2)

        // A stream of bogus kids within the refetch interval costs no further fetch.
        for index in 0..<20 {
            let bogus = "Bearer " + (try Self.token(kid: "bogus-\(index)"))
            #expect(await Self.refusal(verifier, bogus, at: Self.now.addingTimeInterval(62)) == .kidUnknown)
        }
        #expect(loader.loads == 2)
        // After the interval one more refetch happens for an unknown kid.
        #expect(
            await Self.refusal(
                verifier, "Bearer " + (try Self.token(kid: "bogus")), at: Self.now.addingTimeInterval(122))
                == .kidUnknown)
        #expect(loader.loads == 3)
    }

    @Test func expiredSetIsReloadedAndRetiredKeyStopsVerifying() async throws {
        let loader = MemoryKeySetLoader(Self.keySet([("k1", TestKeys.google)]))
        let verifier = Self.verifier(loader)
        #expect(await Self.refusal(verifier, "Bearer " + (try Self.token())) == nil)
        loader.replace(Self.keySet([("k2", TestKeys.rotated)]))
        // Still fresh: k1 is served from the cache.
        let later = Self.now.addingTimeInterval(1800)
        let k1 = "Bearer " + (try Self.token(Self.claims(iat: 1_714_559_390, exp: 1_714_562_990)))
        #expect(await Self.refusal(verifier, k1, at: later) == nil)
        #expect(loader.loads == 1)
        // After maximumAge the set is reloaded: k1 was retired.
        let expiredAge = Self.now.addingTimeInterval(3600)
        let k1Again = "Bearer " + (try Self.token(Self.claims(iat: 1_714_561_190, exp: 1_714_564_790)))
        #expect(await Self.refusal(verifier, k1Again, at: expiredAge) == .kidUnknown)
        #expect(loader.loads == 2)
    }

    @Test func unavailableKeySetIsItsOwnRefusalAndAFailedReloadKeepsTheOldSet() async throws {
        let empty = MemoryKeySetLoader(nil)
        #expect(await Self.refusal(Self.verifier(empty), "Bearer " + (try Self.token())) == .keySetUnavailable)

        let loader = MemoryKeySetLoader(Self.keySet([("k1", TestKeys.google)]))
        let verifier = Self.verifier(loader)
        #expect(await Self.refusal(verifier, "Bearer " + (try Self.token())) == nil)
        loader.replace(nil)
        let stale = Self.now.addingTimeInterval(4000)
        let token = "Bearer " + (try Self.token(Self.claims(iat: 1_714_561_590, exp: 1_714_565_190)))
        #expect(await Self.refusal(verifier, token, at: stale) == nil)
        #expect(loader.loads == 2)
    }

    @Test func keySetFileIsReadAndRereadOnRotation() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gp-jwks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("certs.json").path
        try Self.keySet([("k1", TestKeys.google)]).write(to: URL(fileURLWithPath: path))
        let cache = GoogleKeySetCache(loader: GoogleKeySetFile(path: path), minimumRefetchInterval: 60)
        let verifier = PushAuthenticationVerifier(audience: Self.audience, serviceAccountEmail: Self.email, keys: cache)
        #expect(await Self.refusal(verifier, "Bearer " + (try Self.token())) == nil)
        try Self.keySet([("k2", TestKeys.rotated)]).write(to: URL(fileURLWithPath: path))
        let rotated = "Bearer " + (try Self.token(key: TestKeys.rotated, kid: "k2"))
        #expect(await Self.refusal(verifier, rotated, at: Self.now.addingTimeInterval(60)) == nil)
        let missing = GoogleKeySetCache(loader: GoogleKeySetFile(path: directory.appendingPathComponent("none").path))
        await #expect(throws: GooglePlayTrustError.self) { try await missing.key(kid: "k1", now: Self.now) }
    }
}

/// Sorted-key JSON for hand-built tokens.
enum GooglePlayJSONForTests {
    static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try! encoder.encode(value)
    }
}
