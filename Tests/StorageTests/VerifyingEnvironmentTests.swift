import AppStoreModels
import Foundation
import Testing

@testable import StorekeeperIngestion

/// The verifier a V2 notification goes to: the environment it claims when the app has it, else
/// the app's first; an app with one environment takes it without reading the payload.
@Suite struct VerifyingEnvironmentTests {
    /// A compact JWS with `payload` (not signed: the claim is read before verifying).
    static func token(_ payload: String) -> String {
        func part(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        return part(#"{"alg":"ES256"}"#) + "." + part(payload) + "." + part("signature")
    }

    static let claimsSandbox = token(#"{"notificationType":"DID_RENEW","data":{"environment":"Sandbox"}}"#)
    static let claimsXcode = token(#"{"notificationType":"TEST","summary":{"environment":"Xcode"}}"#)

    @Test func oneEnvironmentIsTakenWhateverThePayload() {
        for payload in [Self.claimsSandbox, Self.claimsXcode, "not a token", ""] {
            #expect(NotificationIngestor.verifyingEnvironment(of: payload, among: [.production]) == .production)
            #expect(NotificationIngestor.verifyingEnvironment(of: payload, among: [.sandbox]) == .sandbox)
        }
    }

    @Test func theClaimChoosesAmongSeveral() {
        let both: [AppStoreEnvironment] = [.production, .sandbox]
        #expect(NotificationIngestor.verifyingEnvironment(of: Self.claimsSandbox, among: both) == .sandbox)
        #expect(
            NotificationIngestor.verifyingEnvironment(of: Self.claimsSandbox, among: [.sandbox, .production])
                == .sandbox)
        // A claim the app does not have, or none readable: the app's first.
        #expect(NotificationIngestor.verifyingEnvironment(of: Self.claimsXcode, among: both) == .production)
        #expect(NotificationIngestor.verifyingEnvironment(of: "not a token", among: both) == .production)
        #expect(
            NotificationIngestor.verifyingEnvironment(of: Self.claimsXcode, among: [.xcode, .sandbox]) == .xcode)
    }

    @Test func noEnvironmentNoVerifier() {
        #expect(NotificationIngestor.verifyingEnvironment(of: Self.claimsSandbox, among: []) == nil)
    }
}
