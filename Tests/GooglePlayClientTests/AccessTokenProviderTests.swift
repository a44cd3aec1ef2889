import AppStoreClient
import Foundation
import GooglePlayModels
import GooglePlayTrust
import Testing

@testable import GooglePlayClient

struct AccessTokenProviderTests {
    @Test func tokenIsCachedSharedAndRenewedBeforeExpiry() async throws {
        let transport = ScriptedTransport([
            .respond(200, #"{"access_token":"ya29.one","expires_in":3600,"token_type":"Bearer"}"#),
            .respond(200, #"{"access_token":"ya29.two","expires_in":3600,"token_type":"Bearer"}"#),
        ])
        let clock = SteppedClock()
        let provider = AccessTokenProvider(
            key: ClientTestKeys.account, transport: transport, clock: clock, refreshMargin: 300)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<16 { group.addTask { try await provider.accessToken() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(tokens) == ["ya29.one"])
        #expect(await provider.exchangeCount == 1)
        clock.advance(seconds: 3299)
        #expect(try await provider.accessToken() == "ya29.one")
        clock.advance(seconds: 1)
        #expect(try await provider.accessToken() == "ya29.two")
        #expect(await provider.exchangeCount == 2)
    }

    @Test func assertionIsWhatGoogleExpects() async throws {
        let transport = ScriptedTransport([
            .respond(200, #"{"access_token":"ya29.one","expires_in":3600,"token_type":"Bearer"}"#)
        ])
        let clock = SteppedClock()
        let provider = AccessTokenProvider(key: ClientTestKeys.account, transport: transport, clock: clock)
        _ = try await provider.accessToken()
        let form = String(decoding: transport.sent[0].body ?? Data(), as: UTF8.self)
        let assertion = String(form.split(separator: "&")[1].dropFirst("assertion=".count))
        let claims = try ServiceAccountAssertion.verify(
            assertion, publicKey: ClientTestKeys.account.privateKey.publicKey, audience: "https://oauth2.test/token",
            now: clock.wallNow())
        #expect(
            claims
                == ServiceAccountAssertion.Claims(
                    iss: "play@test.iam.gserviceaccount.com", scope: "https://www.googleapis.com/auth/androidpublisher",
                    aud: "https://oauth2.test/token", iat: 1_714_557_600, exp: 1_714_561_200))
    }

    @Test func refusedGrantIsReportedWithGooglesCode() async throws {
        let transport = ScriptedTransport([
            .respond(400, #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#)
        ])
        let provider = AccessTokenProvider(key: ClientTestKeys.account, transport: transport, clock: SteppedClock())
        var refusal: GooglePlayClientError?
        do {
            _ = try await provider.accessToken()
        } catch {
            refusal = error
        }
        let error = try #require(refusal)
        #expect(error.code == .tokenRefused)
        #expect(error.oauthError == "invalid_grant")
        #expect(error.googleMessage == "Invalid JWT Signature.")
        #expect(!error.description.contains("eyJ"))
        #expect(transport.sent.count == 1)
    }
}
