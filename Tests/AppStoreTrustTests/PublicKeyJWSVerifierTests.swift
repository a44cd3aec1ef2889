import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import AppStoreTrust

/// One crafted token per rule of `PublicKeyJWSVerifier`, each breaking only that rule, and the
/// same broken tokens through `SignedDataVerifier` to show both refuse with the same code.
struct PublicKeyJWSVerifierTests {
    let key: PrivateKey
    let verifier: PublicKeyJWSVerifier
    static let header = #"{"alg":"ES256","kid":"KEY1","typ":"JWT"}"#
    static let payload = Array(#"{"aud":"promotional-offer","bid":"com.example","iat":1700000000}"#.utf8)

    init() throws {
        key = try PrivateKey.generateP256()
        verifier = try PublicKeyJWSVerifier(publicKey: key.publicKey)
    }

    func token(header: String = header, payload: [UInt8] = payload, signature: [UInt8]? = nil) throws -> String {
        try TestSigning.token(header: header, payload: payload, key: key, signature: signature)
    }

    func refusal(_ token: String) -> TrustRule? {
        do {
            _ = try verifier.verify(token)
            return nil
        } catch { return error.rule }
    }

    @Test func tokenSignedByTheKeyVerifiesWithHeaderAndPayloadAsSigned() throws {
        let token = try token()
        let verified = try verifier.verify(token)
        #expect(verified.jws == token)
        #expect(verified.headerJSON == Array(Self.header.utf8))
        #expect(verified.payloadJSON == Self.payload)
        let claims = try verified.payload(as: [String: JSONValue].self)
        #expect(claims["bid"] == .string("com.example"))
        #expect(claims["iat"] == .integer(1_700_000_000))
        // Tokens from the module's own signers verify too.
        let signed = try JWSSigner(key: key).sign(payload: Self.payload, header: ["kid": "KEY1"])
        #expect(try verifier.verify(signed).payloadJSON == Self.payload)
    }

    @Test func payloadOfTheWrongShapeNamesTheField() throws {
        let verified = try verifier.verify(try token(payload: Array(#"{"exp":"tomorrow"}"#.utf8)))
        struct Claims: Decodable { var exp: Int64 }
        do {
            _ = try verified.payload(as: Claims.self)
            Issue.record("a string exp decoded as Int64")
        } catch {
            #expect(error.rule == .payloadSchema)
            #expect(error.detail.contains("exp"))
        }
    }

    @Test func keyNotOnP256IsRefusedUpFront() throws {
        let p384 = try PrivateKey.generateEC(curve: "secp384r1")
        do {
            _ = try PublicKeyJWSVerifier(publicKey: p384.publicKey)
            Issue.record("a P-384 key was accepted for ES256")
        } catch {
            #expect(error.rule == .keyNotP256)
            #expect(error.category == .invalidKey)
        }
    }

    @Test func oversizedTokenIsRefusedBeforeParsing() throws {
        #expect(refusal(String(repeating: "A", count: (1 << 20) + 1)) == .tooLarge)
        let filler = String(repeating: "x", count: 1 << 20)
        #expect(refusal(try token(payload: Array(#"{"note":"\#(filler)"}"#.utf8))) == .tooLarge)
    }

    @Test(arguments: ["", "abc", "a.b", "a.b.c.d"])
    func wrongPartCountIsRefused(token: String) {
        #expect(refusal(token) == .partCount)
    }

    @Test func partThatIsNotUnpaddedBase64URLIsRefused() throws {
        let parts = try token().split(separator: ".", omittingEmptySubsequences: false)
        #expect(refusal("\(parts[0]).\(parts[1])*.\(parts[2])") == .base64)
        #expect(refusal("\(parts[0])=.\(parts[1]).\(parts[2])") == .base64)
        #expect(refusal("\(parts[0]).\(parts[1]).\(parts[2])+") == .base64)
        #expect(refusal(".\(parts[1]).\(parts[2])") == .base64)
        #expect(refusal("\(parts[0])..\(parts[2])") == .base64)
    }

    @Test func headerThatIsNotAJSONObjectIsRefused() throws {
        #expect(refusal(try token(header: "not json")) == .headerNotJSON)
        #expect(refusal(try token(header: #"["ES256"]"#)) == .headerNotJSON)
        #expect(refusal(try token(header: #"{"alg":"ES256","kid":5}"#)) == .headerNotJSON)
    }

    @Test func repeatedHeaderKeyIsRefused() throws {
        #expect(refusal(try token(header: #"{"alg":"none","alg":"ES256"}"#)) == .duplicateKey)
        #expect(refusal(try token(header: #"{"alg":"ES256","\u0061lg":"ES256"}"#)) == .duplicateKey)
    }

    @Test(arguments: ["none", "HS256", "RS256", "ES384", "es256", "ES256 "])
    func algorithmsOtherThanES256AreRefused(alg: String) throws {
        #expect(refusal(try token(header: #"{"alg":"\#(alg)"}"#)) == .algorithmNotES256)
    }

    @Test func missingAlgorithmIsRefused() throws {
        #expect(refusal(try token(header: #"{"kid":"KEY1"}"#)) == .algorithmNotES256)
    }

    @Test func derSignatureInsteadOfRawIsRefused() throws {
        let input = Base64URL.encode(Array(Self.header.utf8)) + "." + Base64URL.encode(Self.payload)
        #expect(refusal(try token(signature: key.signDER(Array(input.utf8)))) == .signatureLength)
        #expect(refusal(try token(signature: [])) == .signatureLength)
    }

    @Test func signatureByAnotherKeyOrOverOtherBytesIsRefused() throws {
        let other = try PrivateKey.generateP256()
        #expect(
            refusal(try TestSigning.token(header: Self.header, payload: Self.payload, key: other)) == .signatureInvalid)
        let parts = try token().split(separator: ".")
        let forged = Base64URL.encode(Array(#"{"aud":"promotional-offer","bid":"com.evil"}"#.utf8))
        #expect(refusal("\(parts[0]).\(forged).\(parts[2])") == .signatureInvalid)
        var signature = try #require(Base64URL.decode(parts[2]))
        signature[40] ^= 0x01
        #expect(refusal("\(parts[0]).\(parts[1]).\(Base64URL.encode(signature))") == .signatureInvalid)
    }

    @Test func signedPayloadThatIsNotAJSONObjectIsRefused() throws {
        #expect(refusal(try token(payload: Array("not json".utf8))) == .payloadNotJSON)
        #expect(refusal(try token(payload: Array("[1,2]".utf8))) == .payloadNotJSON)
        #expect(refusal(try token(payload: Array(#"{"a":"#.utf8))) == .payloadNotJSON)
    }

    @Test func repeatedPayloadKeyIsRefused() throws {
        #expect(refusal(try token(payload: Array(#"{"bid":"com.example","bid":"com.evil"}"#.utf8))) == .duplicateKey)
    }

    /// The rules both verifiers share give the same code for the same token: signed by the
    /// leaf key with a full x5c header, so only the broken rule differs from a good token.
    @Test func sameTokenGetsTheSameCodeAsSignedDataVerifier() throws {
        let ca = try TestSigning.authority()
        let keyed = try PublicKeyJWSVerifier(publicKey: ca.leafKey.publicKey)
        let signedData = try SignedDataVerifier(
            rootCertificates: [ca.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox)
        let chain = [ca.leaf, ca.intermediate, ca.root]
        let payload = TestSigning.json(TestSigning.transaction())
        let good = try TestSigning.token(header: TestSigning.header(chain: chain), payload: payload, key: ca.leafKey)
        let parts = good.split(separator: ".")
        let input = "\(parts[0]).\(parts[1])"
        var flipped = try #require(Base64URL.decode(parts[2]))
        flipped[3] ^= 0x80
        let broken: [(TrustRule, String)] = [
            (.tooLarge, String(repeating: "A", count: (1 << 20) + 1)),
            (.partCount, "\(input)"),
            (.base64, "\(input)*.\(parts[2])"),
            (.headerNotJSON, try TestSigning.token(header: "{", payload: payload, key: ca.leafKey)),
            (
                .duplicateKey,
                try TestSigning.token(
                    header: #"{"alg":"ES256","alg":"ES256","x5c":[]}"#, payload: payload, key: ca.leafKey)
            ),
            (
                .algorithmNotES256,
                try TestSigning.token(
                    header: TestSigning.header(alg: "HS256", chain: chain), payload: payload, key: ca.leafKey)
            ),
            (.signatureLength, "\(input).\(Base64URL.encode(try ca.leafKey.signDER(Array(input.utf8))))"),
            (.signatureInvalid, "\(input).\(Base64URL.encode(flipped))"),
            (
                .duplicateKey,
                try TestSigning.token(
                    header: TestSigning.header(chain: chain), payload: Array(#"{"a":1,"a":2}"#.utf8), key: ca.leafKey)
            ),
            (
                .payloadNotJSON,
                try TestSigning.token(
                    header: TestSigning.header(chain: chain), payload: Array("[]".utf8), key: ca.leafKey)
            ),
        ]
        for (rule, token) in broken {
            var keyedRule: TrustRule?
            do { _ = try keyed.verify(token) } catch { keyedRule = error.rule }
            var signedDataRule: TrustRule?
            do { _ = try signedData.verifyAndDecodeTransaction(token) } catch { signedDataRule = error.rule }
            #expect(keyedRule == rule, "\(rule.rawValue)")
            #expect(signedDataRule == rule, "\(rule.rawValue)")
        }
        #expect(try keyed.verify(good).payloadJSON == payload)
        #expect(try signedData.verifyAndDecodeTransaction(good).payload.transactionId == "1000000001")
    }
}
