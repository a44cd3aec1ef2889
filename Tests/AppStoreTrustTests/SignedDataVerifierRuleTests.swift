import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import AppStoreTrust

/// One crafted token per rule: each breaks only that rule and must get that rule's error.
struct SignedDataVerifierRuleTests {
    let ca: TestCertificateAuthority
    let verifier: SignedDataVerifier
    let chain: [Certificate]

    init() throws {
        ca = try TestSigning.authority()
        chain = [ca.leaf, ca.intermediate, ca.root]
        verifier = try SignedDataVerifier(
            rootCertificates: [ca.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox)
    }

    var payload: [UInt8] { TestSigning.json(TestSigning.transaction()) }

    func refusal(_ token: String, using verifier: SignedDataVerifier? = nil) -> TrustError? {
        do {
            _ = try (verifier ?? self.verifier).verifyAndDecodeTransaction(token)
            return nil
        } catch { return error }
    }

    @Test func wellFormedTokenVerifies() throws {
        let token = try TestSigning.token(header: TestSigning.header(chain: chain), payload: payload, key: ca.leafKey)
        let verified = try verifier.verifyAndDecodeTransaction(token)
        #expect(verified.payload.transactionId == "1000000001")
        #expect(verified.jws == token)
        #expect(
            try verifier.verifyAndDecodeTransaction(ca.signer.sign(TestSigning.transaction())).payload.price == 9990)
    }

    @Test func oversizedTokenIsRefusedBeforeParsing() {
        let token = String(repeating: "A", count: (1 << 20) + 1)
        #expect(refusal(token)?.rule == .tooLarge)
    }

    @Test(arguments: ["", "abc", "a.b", "a.b.c.d", "..", "a..c"])
    func wrongPartCountOrEmptyParts(token: String) {
        let rule = refusal(token)?.rule
        #expect(rule == .partCount || rule == .base64)
        #expect(rule?.category == .invalidFormat)
    }

    @Test func nonBase64PartIsRefused() throws {
        let good = try TestSigning.token(header: TestSigning.header(chain: chain), payload: payload, key: ca.leafKey)
        let parts = good.split(separator: ".")
        #expect(refusal("\(parts[0]).\(parts[1])*.\(parts[2])")?.rule == .base64)
        #expect(refusal("\(parts[0])=.\(parts[1]).\(parts[2])")?.rule == .base64)
        #expect(refusal("\(parts[0]).\(parts[1]).\(parts[2])+")?.rule == .base64)
    }

    @Test func nonJSONHeaderAndPayloadAreRefused() throws {
        #expect(
            refusal(try TestSigning.token(header: "not json", payload: payload, key: ca.leafKey))?.rule
                == .headerNotJSON)
        #expect(
            refusal(try TestSigning.token(header: "[1,2]", payload: payload, key: ca.leafKey))?.rule == .headerNotJSON)
        #expect(
            refusal(
                try TestSigning.token(
                    header: TestSigning.header(chain: chain), payload: Array("{\"a\":".utf8), key: ca.leafKey))?.rule
                == .payloadNotJSON)
        #expect(
            refusal(
                try TestSigning.token(
                    header: TestSigning.header(chain: chain), payload: Array("\"x\"".utf8), key: ca.leafKey))?.rule
                == .payloadNotJSON)
    }

    @Test func payloadFieldOfWrongTypeNamesTheField() throws {
        let body = Array(#"{"bundleId":"com.example","signedDate":"yesterday"}"#.utf8)
        let error = refusal(
            try TestSigning.token(header: TestSigning.header(chain: chain), payload: body, key: ca.leafKey))
        #expect(error?.rule == .payloadSchema)
        #expect(error?.detail.contains("signedDate") == true)
    }

    @Test func duplicateKeysAreRefused() throws {
        let body = Array(#"{"bundleId":"com.example","bundleId":"com.evil","environment":"Sandbox"}"#.utf8)
        #expect(
            refusal(try TestSigning.token(header: TestSigning.header(chain: chain), payload: body, key: ca.leafKey))?
                .rule == .duplicateKey)
        let escaped = Array(#"{"bundleId":"com.example","bundle\u0049d":"com.evil"}"#.utf8)
        #expect(
            refusal(try TestSigning.token(header: TestSigning.header(chain: chain), payload: escaped, key: ca.leafKey))?
                .rule == .duplicateKey)
        let header = #"{"alg":"none","alg":"ES256","x5c":[]}"#
        #expect(
            refusal(try TestSigning.token(header: header, payload: payload, key: ca.leafKey))?.rule == .duplicateKey)
    }

    @Test func deeplyNestedJSONIsRefusedWithoutCrashing() throws {
        let deep = Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        let body = Array("{\"a\":".utf8) + deep + Array("}".utf8)
        #expect(
            refusal(try TestSigning.token(header: TestSigning.header(chain: chain), payload: body, key: ca.leafKey))?
                .rule == .payloadNotJSON)
    }

    @Test(arguments: ["none", "HS256", "RS256", "ES384", "es256", "ES256 "])
    func algorithmsOtherThanES256AreRefused(alg: String) throws {
        let token = try TestSigning.token(
            header: TestSigning.header(alg: alg, chain: chain), payload: payload, key: ca.leafKey)
        #expect(refusal(token)?.rule == .algorithmNotES256)
    }

    @Test func hs256WithLeafKeyBytesAsSecretIsRefused() throws {
        // The classic confusion attack: HMAC keyed with the public certificate.
        let header = TestSigning.header(alg: "HS256", chain: chain)
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)
        let mac = Digest.hmacSHA256(key: ca.leaf.der, message: Array(input.utf8))
        #expect(refusal(input + "." + Base64URL.encode(mac))?.rule == .algorithmNotES256)
    }

    @Test func missingX5CIsRefused() throws {
        let token = try TestSigning.token(header: #"{"alg":"ES256","typ":"JWT"}"#, payload: payload, key: ca.leafKey)
        #expect(refusal(token)?.rule == .x5cMissing)
    }

    @Test func chainOfOtherThanThreeIsRefused() throws {
        for certificates in [[ca.leaf], [ca.leaf, ca.intermediate], chain + [ca.root]] {
            let token = try TestSigning.token(
                header: TestSigning.header(chain: certificates), payload: payload, key: ca.leafKey)
            #expect(refusal(token)?.rule == .chainLength)
        }
    }

    @Test func malformedCertificateIsRefused() throws {
        let header = #"{"alg":"ES256","x5c":["AAAA","AAAA","AAAA"]}"#
        #expect(
            refusal(try TestSigning.token(header: header, payload: payload, key: ca.leafKey))?.rule
                == .certificateMalformed)
        let notBase64 = #"{"alg":"ES256","x5c":["!!","!!","!!"]}"#
        #expect(
            refusal(try TestSigning.token(header: notBase64, payload: payload, key: ca.leafKey))?.rule
                == .certificateMalformed)
    }

    @Test func chainToAnotherRootIsRefused() throws {
        let other = try TestSigning.authority(name: "Other")
        let token = try other.signer.sign(TestSigning.transaction())
        #expect(refusal(token)?.rule == .chainUntrusted)
        // x5c[2] claiming our root does not help: the root always comes from configuration.
        let spoofed = try TestSigning.token(
            header: TestSigning.header(chain: [other.leaf, other.intermediate, ca.root]), payload: payload,
            key: other.leafKey)
        #expect(refusal(spoofed)?.rule == .chainUntrusted)
    }

    @Test func leafSignedDirectlyByRootIsRefused() throws {
        let leafKey = try PrivateKey.generateP256()
        let leaf = try CertificateRequest(
            commonName: "Direct", serial: 9, notBefore: TestSigning.validFrom, notAfter: TestSigning.validUntil,
            isCertificateAuthority: false, markerOIDs: [AppleOIDs.receiptSigningLeaf]
        ).issue(subjectKey: leafKey, issuer: (ca.root, ca.rootKey))
        let token = try TestSigning.token(
            header: TestSigning.header(chain: [leaf, ca.root, ca.root]), payload: payload, key: leafKey)
        #expect(refusal(token)?.category == .invalidCertificate)
    }

    @Test func signedDateOutsideValidityIsRefused() throws {
        let early = TestSigning.json(
            TestSigning.transaction(signedDate: TestSigning.validFrom.adding(milliseconds: -86_400_000)))
        #expect(
            refusal(try TestSigning.token(header: TestSigning.header(chain: chain), payload: early, key: ca.leafKey))?
                .rule == .chainNotYetValid)
        let late = TestSigning.json(
            TestSigning.transaction(signedDate: TestSigning.validUntil.adding(milliseconds: 86_400_000)))
        #expect(
            refusal(try TestSigning.token(header: TestSigning.header(chain: chain), payload: late, key: ca.leafKey))?
                .rule == .chainExpired)
    }

    func chain(intermediateOIDs: [String], leafOIDs: [String], leafKey: PrivateKey) throws -> [Certificate] {
        let intermediateKey = try PrivateKey.generateP256()
        let intermediate = try CertificateRequest(
            commonName: "Intermediate", serial: 20, notBefore: TestSigning.validFrom, notAfter: TestSigning.validUntil,
            isCertificateAuthority: true, markerOIDs: intermediateOIDs
        ).issue(subjectKey: intermediateKey, issuer: (ca.root, ca.rootKey))
        let leaf = try CertificateRequest(
            commonName: "Leaf", serial: 21, notBefore: TestSigning.validFrom, notAfter: TestSigning.validUntil,
            isCertificateAuthority: false, markerOIDs: leafOIDs
        ).issue(subjectKey: leafKey, issuer: (intermediate, intermediateKey))
        return [leaf, intermediate, ca.root]
    }

    @Test func missingAppleOIDsAreRefused() throws {
        let key = try PrivateKey.generateP256()
        let noIntermediateOID = try chain(
            intermediateOIDs: ["1.2.840.113635.100.6.2.2"], leafOIDs: [AppleOIDs.receiptSigningLeaf], leafKey: key)
        #expect(
            refusal(
                try TestSigning.token(header: TestSigning.header(chain: noIntermediateOID), payload: payload, key: key))?
                .rule == .intermediateOIDMissing)
        let noLeafOID = try chain(
            intermediateOIDs: [AppleOIDs.wwdrIntermediate], leafOIDs: ["1.2.840.113635.100.6.11.2"], leafKey: key)
        #expect(
            refusal(try TestSigning.token(header: TestSigning.header(chain: noLeafOID), payload: payload, key: key))?
                .rule == .leafOIDMissing)
    }

    @Test func leafKeyOnAnotherCurveIsRefused() throws {
        let key = try PrivateKey.generateEC(curve: "secp384r1")
        let certificates = try chain(
            intermediateOIDs: [AppleOIDs.wwdrIntermediate], leafOIDs: [AppleOIDs.receiptSigningLeaf], leafKey: key)
        let token = try TestSigning.token(
            header: TestSigning.header(chain: certificates), payload: payload, key: nil,
            signature: [UInt8](repeating: 1, count: 64))
        #expect(refusal(token)?.rule == .leafKeyNotP256)
    }

    @Test func derSignatureInsteadOfRawIsRefused() throws {
        let header = TestSigning.header(chain: chain)
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)
        let der = try ca.leafKey.signDER(Array(input.utf8))
        #expect(refusal(input + "." + Base64URL.encode(der))?.rule == .signatureLength)
    }

    @Test func tamperedPayloadOrSignatureIsRefused() throws {
        let good = try TestSigning.token(header: TestSigning.header(chain: chain), payload: payload, key: ca.leafKey)
        let parts = good.split(separator: ".")
        let forged = Base64URL.encode(TestSigning.json(TestSigning.transaction(transactionId: "999")))
        #expect(refusal("\(parts[0]).\(forged).\(parts[2])")?.rule == .signatureInvalid)
        var signature = Base64URL.decode(parts[2])!
        signature[10] ^= 0x01
        #expect(refusal("\(parts[0]).\(parts[1]).\(Base64URL.encode(signature))")?.rule == .signatureInvalid)
        let otherKey = try PrivateKey.generateP256()
        #expect(
            refusal(try TestSigning.token(header: TestSigning.header(chain: chain), payload: payload, key: otherKey))?
                .rule == .signatureInvalid)
    }

    @Test func claimsAreCheckedPerType() throws {
        let wrongBundle = try ca.signer.sign(TestSigning.transaction(bundleId: "com.other"))
        #expect(refusal(wrongBundle)?.rule == .bundleIdMismatch)
        let production = try ca.signer.sign(TestSigning.transaction(environment: .production))
        #expect(refusal(production)?.rule == .environmentMismatch)
        #expect(TrustRule.environmentMismatch.category == .invalidEnvironment)
    }

    /// Issue 11, defect 9(d): a genuine payload of another type is refused for its type, before
    /// any claim it lacks (a renewal info has no bundle id; a notification has no environment at
    /// the top level) could name the wrong cause.
    @Test func wrongPayloadTypeIsRefusedByItsOwnRuleBeforeTheClaims() throws {
        var renewal = JWSRenewalInfoDecodedPayload()
        renewal.originalTransactionId = "1000000001"
        renewal.productId = "com.example.monthly"
        renewal.autoRenewProductId = "com.example.monthly"
        renewal.autoRenewStatus = RawEnum(.on)
        renewal.signedDate = TestSigning.signedDate
        renewal.environment = RawEnum(.sandbox)
        let signedRenewal = try ca.signer.sign(renewal)
        var notification = ResponseBodyV2DecodedPayload()
        notification.notificationType = RawEnum(.test)
        notification.notificationUUID = "6b1d6ee4-0000-4000-8000-000000000002"
        notification.signedDate = TestSigning.signedDate
        var data = NotificationData()
        data.bundleId = "com.example"
        data.environment = RawEnum(.sandbox)
        notification.data = data
        let signedNotification = try ca.signer.sign(notification)
        let signedTransaction = try ca.signer.sign(TestSigning.transaction())

        func rule(_ body: () throws -> Void) -> TrustRule? {
            do {
                try body()
                return nil
            } catch let error as TrustError { return error.rule } catch { return nil }
        }
        #expect(rule { _ = try verifier.verifyAndDecodeNotification(signedRenewal) } == .payloadTypeMismatch)
        #expect(rule { _ = try verifier.verifyAndDecodeNotification(signedTransaction) } == .payloadTypeMismatch)
        #expect(rule { _ = try verifier.verifyAndDecodeRenewalInfo(signedNotification) } == .payloadTypeMismatch)
        #expect(rule { _ = try verifier.verifyAndDecodeRenewalInfo(signedTransaction) } == .payloadTypeMismatch)
        #expect(rule { _ = try verifier.verifyAndDecodeTransaction(signedRenewal) } == .payloadTypeMismatch)
        #expect(rule { _ = try verifier.verifyAndDecodeTransaction(signedNotification) } == .payloadTypeMismatch)
        #expect(rule { _ = try verifier.verifyAndDecodeAppTransaction(signedTransaction) } == .payloadTypeMismatch)
        // A sparse payload (as in Apple's own test vectors) carries no type and goes on to the claims.
        let sparse = try TestSigning.token(
            header: TestSigning.header(chain: chain),
            payload: Array(#"{"environment":"Production","signedDate":1764547200000}"#.utf8), key: ca.leafKey)
        #expect(rule { _ = try verifier.verifyAndDecodeRenewalInfo(sparse) } == .environmentMismatch)
        // Each of them verifies as what it is.
        #expect(rule { _ = try verifier.verifyAndDecodeRenewalInfo(signedRenewal) } == nil)
        #expect(rule { _ = try verifier.verifyAndDecodeNotification(signedNotification) } == nil)
        #expect(rule { _ = try verifier.verifyAndDecodeTransaction(signedTransaction) } == nil)
        // A forged payload of the wrong type is still refused for its signature first.
        let forged = try TestSigning.authority(name: "Evil").signer.sign(renewal)
        #expect(rule { _ = try verifier.verifyAndDecodeNotification(forged) } == .chainUntrusted)
        #expect(TrustRule.payloadTypeMismatch.rawValue == "format.payloadType")
        #expect(TrustRule.payloadTypeMismatch.category == .invalidFormat)
        do {
            _ = try verifier.verifyAndDecodeNotification(signedRenewal)
        } catch {
            #expect(error.detail == "expected a notification, but the payload is a signed renewal info")
        }
    }

    @Test func productionRequiresAppAppleId() {
        #expect(throws: TrustError.self) {
            _ = try SignedDataVerifier(
                rootCertificates: [ca.root], bundleId: "com.example", appAppleId: nil, environment: .production)
        }
        #expect(throws: TrustError.self) {
            _ = try SignedDataVerifier(
                rootCertificates: [], bundleId: "com.example", appAppleId: 1, environment: .sandbox)
        }
    }

    @Test func unsignedEnvironmentsNeverAcceptSandboxClaims() throws {
        let xcode = try SignedDataVerifier(
            rootCertificates: [], bundleId: "com.example", appAppleId: nil, environment: .xcode)
        let sandboxToken = try ca.signer.sign(TestSigning.transaction(environment: .sandbox))
        #expect(refusal(sandboxToken, using: xcode)?.rule == .environmentMismatch)
    }

    @Test func notificationNestedPayloadsAreVerified() throws {
        var notification = ResponseBodyV2DecodedPayload()
        notification.notificationType = RawEnum(.subscribed)
        notification.subtype = RawEnum(.initialBuy)
        notification.notificationUUID = "6b1d6ee4-0000-4000-8000-000000000001"
        notification.signedDate = TestSigning.signedDate
        var data = NotificationData()
        data.bundleId = "com.example"
        data.environment = RawEnum(.sandbox)
        data.signedTransactionInfo = try ca.signer.sign(TestSigning.transaction())
        notification.data = data
        let verified = try verifier.verifyAndDecodeNotificationContents(ca.signer.sign(notification))
        #expect(verified.transaction?.payload.transactionId == "1000000001")
        #expect(verified.renewalInfo == nil)

        data.signedTransactionInfo = try TestSigning.authority(name: "Evil").signer.sign(TestSigning.transaction())
        notification.data = data
        #expect(throws: TrustError.self) {
            _ = try verifier.verifyAndDecodeNotificationContents(ca.signer.sign(notification))
        }
    }

    @Test func onlineChecksUseNowInsteadOfSignedDate() throws {
        // With online checks on, an old signedDate inside validity no longer matters; "now"
        // after the chain expired does.
        let clock = FixedClock(TestSigning.validUntil.adding(milliseconds: 1000))
        let online = try SignedDataVerifier(
            rootCertificates: [ca.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox,
            enableOnlineChecks: true, clock: clock.function)
        #expect(refusal(try ca.signer.sign(TestSigning.transaction()), using: online)?.rule == .chainExpired)
    }
}
