import AppStoreTrust
import Foundation
import Testing

@testable import GooglePlayTrust

struct RSAKeyAndKeySetTests {
    @Test func rs256SignatureVerifiesOnlyForItsMessageAndKey() throws {
        let message = Array("header.payload".utf8)
        let signature = try TestKeys.google.signRS256(message)
        #expect(signature.count == 256)
        #expect(TestKeys.google.publicKey.verifyRS256(signature: signature, message: message))
        #expect(!TestKeys.google.publicKey.verifyRS256(signature: signature, message: Array("header.payloaD".utf8)))
        #expect(!TestKeys.attacker.publicKey.verifyRS256(signature: signature, message: message))
        var flipped = signature
        flipped[100] ^= 1
        #expect(!TestKeys.google.publicKey.verifyRS256(signature: flipped, message: message))
        #expect(!TestKeys.google.publicKey.verifyRS256(signature: [], message: message))
    }

    @Test func privateKeyPEMRoundTripsAndDescriptionHidesIt() throws {
        let pem = TestKeys.google.pkcs8PEM
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let reread = try RSAPrivateKey(pem: pem)
        #expect(reread.publicKey.modulus == TestKeys.google.publicKey.modulus)
        #expect(reread.description == "RSAPrivateKey(2048 bits)")
        #expect(!"\(reread)".contains("BEGIN"))
        #expect(TestKeys.google.publicKey.exponent == [1, 0, 1])
        #expect(TestKeys.google.publicKey.bits == 2048)
    }

    @Test func badKeysAreRefusedWithTheirRules() throws {
        #expect(throws: GooglePlayTrustError.self) { try RSAPrivateKey(pem: "not a key") }
        do {
            _ = try RSAPrivateKey(pem: "not a key")
        } catch {
            #expect(error.rule == .keyMalformed)
        }
        let small = try RSAPrivateKey.generate(bits: 1024)
        do {
            _ = try RSAPrivateKey(pem: small.pkcs8PEM)
            Issue.record("a 1024-bit key was accepted")
        } catch {
            #expect(error.rule == .keyTooSmall)
        }
        do {
            _ = try RSAPublicKey(modulus: small.publicKey.modulus, exponent: [1, 0, 1])
            Issue.record("a 1024-bit public key was accepted")
        } catch {
            #expect(error.rule == .keyTooSmall)
        }
        // An EC key in PEM is not RSA.
        let ec = try AppStoreTrust.PrivateKey.generateP256()
        do {
            _ = try RSAPrivateKey(pem: ec.pkcs8PEM)
            Issue.record("an EC key was accepted")
        } catch {
            #expect(error.rule == .keyNotRSA)
        }
    }

    @Test func keySetParsesGooglesFormatAndSkipsOtherKeys() throws {
        let key = TestKeys.google.publicKey
        let json = """
            {"keys":[
              {"kty":"RSA","alg":"RS256","use":"sig","kid":"abc","n":"\(Base64URL.encode(key.modulus))","e":"AQAB"},
              {"kty":"EC","crv":"P-256","kid":"ec","x":"AA","y":"AA"},
              {"kty":"RSA","alg":"RSA-OAEP","use":"enc","kid":"enc","n":"AA","e":"AQAB"}]}
            """
        let set = try GoogleKeySet(json: Data(json.utf8))
        #expect(Set(set.keys.keys) == ["abc"])
        #expect(set.keys["abc"]?.modulus == key.modulus)
        let published = String(decoding: GoogleKeySet.json(of: [("abc", key)]), as: UTF8.self)
        #expect(
            published
                == #"{"keys":[{"alg":"RS256","e":"AQAB","kid":"abc","kty":"RSA","n":""# + Base64URL.encode(key.modulus)
                + #"","use":"sig"}]}"#)
    }

    @Test func malformedKeySetsAreRefused() {
        func rule(_ json: String) -> PlayTrustRule? {
            do {
                _ = try GoogleKeySet(json: Data(json.utf8))
                return nil
            } catch {
                return error.rule
            }
        }
        #expect(rule("[]") == .keySetMalformed)
        #expect(rule(#"{"keys":[]}"#) == .keySetMalformed)
        #expect(rule(#"{"keys":[{"kty":"RSA","kid":"a","n":"!!","e":"AQAB"}]}"#) == .keySetMalformed)
        #expect(rule(#"{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}"#) == .keySetMalformed)
        #expect(rule(#"{"keys":[{"kty":"RSA","kid":"a","n":"AQAB","e":"AQAB"}]}"#) == .keyTooSmall)
    }
}
