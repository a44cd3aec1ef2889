import AppStoreTrust
import Foundation
import Testing

@testable import GooglePlayTrust

struct ServiceAccountTests {
    static func keyFile(_ fields: [String: String]) -> Data {
        try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
    }

    static let fields: [String: String] = [
        "type": "service_account", "project_id": "my-project", "private_key_id": "kid-1",
        "private_key": TestKeys.google.pkcs8PEM, "client_email": "play@my-project.iam.gserviceaccount.com",
        "client_id": "123", "token_uri": "https://oauth2.googleapis.com/token",
    ]

    @Test func keyFileParsesAndRoundTrips() throws {
        let key = try ServiceAccountKey(json: Self.keyFile(Self.fields))
        #expect(key.clientEmail == "play@my-project.iam.gserviceaccount.com")
        #expect(key.privateKeyId == "kid-1")
        #expect(key.tokenURI.absoluteString == "https://oauth2.googleapis.com/token")
        #expect(key.projectId == "my-project")
        #expect(key.description == "ServiceAccountKey(play@my-project.iam.gserviceaccount.com, key id kid-1)")
        let again = try ServiceAccountKey(json: key.json)
        #expect(again.privateKey.publicKey.modulus == TestKeys.google.publicKey.modulus)
    }

    @Test func keyFileErrorsNameTheField() {
        func detail(_ change: (inout [String: String]) -> Void) -> String? {
            var fields = Self.fields
            change(&fields)
            do {
                _ = try ServiceAccountKey(json: Self.keyFile(fields))
                return nil
            } catch {
                #expect(error.rule == .serviceAccountMalformed || error.rule == .keyMalformed)
                #expect(!error.description.contains("PRIVATE KEY"))
                return error.detail
            }
        }
        #expect(detail { $0["type"] = "authorized_user" } == "key file 'type' is not service_account")
        #expect(detail { $0["client_email"] = nil } == "key file has no 'client_email'")
        #expect(detail { $0["private_key_id"] = "" } == "key file has no 'private_key_id'")
        #expect(detail { $0["token_uri"] = "ftp://x" } == "key file 'token_uri' is not an http(s) URL")
        #expect(detail { $0["private_key"] = "garbage" } == "key file 'private_key': not a PEM private key")
        #expect((try? ServiceAccountKey(json: Data("nope".utf8))) == nil)
    }

    @Test func assertionCarriesGooglesClaimsAndVerifies() throws {
        let key = try ServiceAccountKey(json: Self.keyFile(Self.fields))
        let now = Date(timeIntervalSince1970: 1_714_557_600.7)
        let assertion = try ServiceAccountAssertion.sign(key: key, now: now, lifetime: 7200)
        let parts = assertion.split(separator: ".")
        #expect(parts.count == 3)
        #expect(
            String(decoding: Base64URL.decode(parts[0])!, as: UTF8.self)
                == #"{"alg":"RS256","kid":"kid-1","typ":"JWT"}"#)
        #expect(
            String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self)
                == #"{"aud":"https://oauth2.googleapis.com/token","exp":1714561200,"iat":1714557600,"iss":"play@my-project.iam.gserviceaccount.com","scope":"https://www.googleapis.com/auth/androidpublisher"}"#
        )
        let claims = try ServiceAccountAssertion.verify(
            assertion, publicKey: TestKeys.google.publicKey, audience: "https://oauth2.googleapis.com/token", now: now)
        #expect(claims.iss == "play@my-project.iam.gserviceaccount.com")
        #expect(try ServiceAccountAssertion.keyId(of: assertion) == "kid-1")

        func rule(_ body: () throws(GooglePlayTrustError) -> Void) -> PlayTrustRule? {
            do throws(GooglePlayTrustError) {
                try body()
                return nil
            } catch {
                return error.rule
            }
        }
        #expect(
            rule { () throws(GooglePlayTrustError) in
                _ = try ServiceAccountAssertion.verify(
                    assertion, publicKey: TestKeys.attacker.publicKey, audience: "https://oauth2.googleapis.com/token",
                    now: now)
            } == .signatureInvalid)
        #expect(
            rule { () throws(GooglePlayTrustError) in
                _ = try ServiceAccountAssertion.verify(
                    assertion, publicKey: TestKeys.google.publicKey, audience: "https://other/token", now: now)
            } == .audienceMismatch)
        #expect(
            rule { () throws(GooglePlayTrustError) in
                _ = try ServiceAccountAssertion.verify(
                    assertion, publicKey: TestKeys.google.publicKey, audience: "https://oauth2.googleapis.com/token",
                    now: now.addingTimeInterval(3700))
            } == .expired)
    }
}
