import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import AppStoreTrust

/// The reader that looks inside a token before verification: what it returns for a
/// well-formed token, and `nil` (never a partial read) for every shape verification refuses.
struct UnverifiedJWSTests {
    let ca: TestCertificateAuthority
    let header: String

    init() throws {
        ca = try TestSigning.authority()
        header = TestSigning.header(chain: [ca.leaf, ca.intermediate, ca.root])
    }

    func token(payload: [UInt8]) throws -> String {
        try TestSigning.token(header: header, payload: payload, key: ca.leafKey)
    }

    @Test func wellFormedTokenIsReadPartByPart() throws {
        let transaction = TestSigning.transaction()
        let token = try token(payload: TestSigning.json(transaction))
        #expect(UnverifiedJWS.payload(token, as: JWSTransactionDecodedPayload.self) == transaction)
        #expect(UnverifiedJWS.payloadBytes(token) == TestSigning.json(transaction))
        #expect(UnverifiedJWS.headerBytes(token) == Array(header.utf8))
        let signature = try #require(UnverifiedJWS.signatureBytes(token))
        let signingInput = token.utf8.prefix(token.utf8.count - Base64URL.encode(signature).utf8.count - 1)
        #expect(ca.leafKey.publicKey.verifyES256(signature: signature, message: signingInput))
    }

    @Test(arguments: ["", "abc", "a.b", "a.b.c.d", "..", "a..c", ".eyJhIjoxfQ.AA"])
    func wrongPartCountOrEmptyPartReadsNothing(token: String) {
        #expect(UnverifiedJWS.payloadBytes(token) == nil)
        #expect(UnverifiedJWS.headerBytes(token) == nil)
        #expect(UnverifiedJWS.signatureBytes(token) == nil)
        #expect(UnverifiedJWS.payload(token, as: [String: JSONValue].self) == nil)
    }

    @Test func partThatIsNotUnpaddedBase64URLReadsNothing() throws {
        let good = try token(payload: TestSigning.json(TestSigning.transaction()))
        let parts = good.split(separator: ".")
        // A stray character, padding, the standard alphabet, a length base64 cannot have.
        for bad in [
            "\(parts[0]).\(parts[1])*.\(parts[2])", "\(parts[0]).\(parts[1])==.\(parts[2])",
            "\(parts[0]).\(parts[1]).\(parts[2])+", "\(parts[0]).\(parts[1])/.\(parts[2])",
            "\(parts[0]).AAAAA.\(parts[2])",
        ] {
            #expect(UnverifiedJWS.payloadBytes(bad) == nil)
            #expect(UnverifiedJWS.signatureBytes(bad) == nil)
            #expect(UnverifiedJWS.claimedEnvironment(ofTransaction: bad) == nil)
        }
    }

    @Test func payloadThatIsNotJSONOrNotTheShapeIsNil() throws {
        let text = try token(payload: Array("not json".utf8))
        #expect(UnverifiedJWS.payloadBytes(text) == Array("not json".utf8))
        #expect(UnverifiedJWS.payload(text, as: [String: JSONValue].self) == nil)
        #expect(UnverifiedJWS.claimedEnvironment(ofTransaction: text) == nil)
        let array = try token(payload: Array("[1,2]".utf8))
        #expect(UnverifiedJWS.payload(array, as: JWSTransactionDecodedPayload.self) == nil)
        let wrongType = try token(payload: Array(#"{"environment":"Sandbox","signedDate":"yesterday"}"#.utf8))
        #expect(UnverifiedJWS.payload(wrongType, as: JWSTransactionDecodedPayload.self) == nil)
        #expect(UnverifiedJWS.claimedEnvironment(ofTransaction: wrongType) == nil)
    }

    @Test func tokenOverOneMebibyteReadsNothing() throws {
        let filler = String(repeating: "x", count: 1 << 20)
        let payload = Array(#"{"environment":"Sandbox","note":"\#(filler)"}"#.utf8)
        let token = try token(payload: payload)
        #expect(token.utf8.count > CompactJWS.maximumLength)
        #expect(UnverifiedJWS.payloadBytes(token) == nil)
        #expect(UnverifiedJWS.headerBytes(token) == nil)
        #expect(UnverifiedJWS.claimedEnvironment(ofTransaction: token) == nil)
        let small = try self.token(payload: Array(#"{"environment":"Sandbox"}"#.utf8))
        #expect(UnverifiedJWS.claimedEnvironment(ofTransaction: small) == .sandbox)
    }

    @Test(arguments: [AppStoreEnvironment.sandbox, .production, .xcode, .localTesting])
    func signedTransactionClaimsItsEnvironment(environment: AppStoreEnvironment) throws {
        let token = try ca.signer.sign(TestSigning.transaction(environment: environment))
        #expect(UnverifiedJWS.claimedEnvironment(ofTransaction: token) == environment)
        var unnamed = TestSigning.transaction()
        unnamed.environment = nil
        #expect(UnverifiedJWS.claimedEnvironment(ofTransaction: try ca.signer.sign(unnamed)) == nil)
    }

    @Test func notificationClaimsTheEnvironmentOfDataSummaryOrAppData() throws {
        var notification = ResponseBodyV2DecodedPayload()
        notification.notificationType = RawEnum(.subscribed)
        notification.signedDate = TestSigning.signedDate
        #expect(UnverifiedJWS.claimedEnvironment(ofNotification: try ca.signer.sign(notification)) == nil)

        var data = NotificationData()
        data.environment = RawEnum(.sandbox)
        notification.data = data
        #expect(UnverifiedJWS.claimedEnvironment(ofNotification: try ca.signer.sign(notification)) == .sandbox)

        notification.data = nil
        var summary = Summary()
        summary.environment = RawEnum(.production)
        notification.summary = summary
        #expect(UnverifiedJWS.claimedEnvironment(ofNotification: try ca.signer.sign(notification)) == .production)

        notification.summary = nil
        var appData = AppData()
        appData.environment = RawEnum(.sandbox)
        notification.appData = appData
        #expect(UnverifiedJWS.claimedEnvironment(ofNotification: try ca.signer.sign(notification)) == .sandbox)

        // A value Apple has not invented yet is not an environment a verifier exists for.
        let future = try token(payload: Array(#"{"notificationType":"X","data":{"environment":"Staging"}}"#.utf8))
        #expect(UnverifiedJWS.claimedEnvironment(ofNotification: future) == nil)
        // A transaction is not a notification.
        let transaction = try ca.signer.sign(TestSigning.transaction())
        #expect(UnverifiedJWS.claimedEnvironment(ofNotification: transaction) == nil)
    }
}
