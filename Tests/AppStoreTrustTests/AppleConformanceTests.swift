import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import AppStoreTrust

/// Apple's own test vectors (../shared/conformance/apple-library), with the outcomes its
/// README gives.
@Suite(.enabled(if: Conformance.isAvailable, Comment(rawValue: Conformance.skipMessage)))
struct AppleConformanceTests {
    static let effectiveDate = Timestamp(millisecondsSince1970: 1_761_962_975_000)

    func verifier(_ environment: AppStoreEnvironment, bundleId: String = "com.example", appAppleId: Int64? = 1234)
        throws -> SignedDataVerifier
    {
        try SignedDataVerifier(
            rootCertificates: [Certificate(contentsOf: Conformance.url("certs/testCA.der"))],
            bundleId: bundleId, appAppleId: appAppleId, environment: environment)
    }

    func rule(_ body: () throws -> Void) -> TrustRule? {
        do { try body(); return nil } catch let error as TrustError { return error.rule } catch { return nil }
    }

    @Test func transactionInfoVerifiesThroughOlderIntermediateCopy() throws {
        let jws = try Conformance.text("mock_signed_data/transactionInfo")
        let verified = try verifier(.sandbox).verifyAndDecodeTransaction(jws)
        #expect(verified.payload.environment == .sandbox)
        #expect(verified.payload.bundleId == "com.example")
        #expect(verified.payload.signedDate == Timestamp(millisecondsSince1970: 1_672_956_154_000))
        #expect(verified.chain?.root == (try Certificate(contentsOf: Conformance.url("certs/testCA.der"))))
    }

    @Test func transactionInfoWithOtherBundleIsInvalidAppIdentifier() throws {
        let jws = try Conformance.text("mock_signed_data/transactionInfo")
        let verifier = try verifier(.sandbox, bundleId: "com.example.x")
        #expect(rule { _ = try verifier.verifyAndDecodeTransaction(jws) } == .bundleIdMismatch)
        #expect(TrustRule.bundleIdMismatch.category == .invalidAppIdentifier)
    }

    @Test func renewalInfoVerifies() throws {
        let jws = try Conformance.text("mock_signed_data/renewalInfo")
        let verified = try verifier(.sandbox).verifyAndDecodeRenewalInfo(jws)
        #expect(verified.payload.environment == .sandbox)
        #expect(verified.payload.signedDate == Timestamp(millisecondsSince1970: 1_672_956_154_000))
    }

    @Test func testNotificationVerifiesAndChecksAppAndEnvironment() throws {
        let jws = try Conformance.text("mock_signed_data/testNotification")
        let verified = try verifier(.sandbox).verifyAndDecodeNotification(jws)
        #expect(verified.payload.notificationType == .test)
        #expect(verified.payload.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(verified.payload.data?.appAppleId == 1234)
        #expect(
            rule { _ = try verifier(.production, appAppleId: 1234).verifyAndDecodeNotification(jws) }
                == .environmentMismatch)
        #expect(
            rule { _ = try verifier(.production, appAppleId: 1235).verifyAndDecodeNotification(jws) }
                == .appAppleIdMismatch)
        // Verified as a transaction: Apple's Swift library refuses it for the top-level bundleId a
        // notification lacks (INVALID_APP_IDENTIFIER); Storekeeper names the real cause first.
        #expect(
            rule { _ = try verifier(.sandbox, appAppleId: 1235).verifyAndDecodeTransaction(jws) }
                == .payloadTypeMismatch)
    }

    @Test func wrongBundleIdNotificationIsRefused() throws {
        let jws = try Conformance.text("mock_signed_data/wrongBundleId")
        #expect(rule { _ = try verifier(.sandbox).verifyAndDecodeNotification(jws) } == .bundleIdMismatch)
    }

    @Test func missingX5CIsRefused() throws {
        let jws = try Conformance.text("mock_signed_data/missingX5CHeaderClaim")
        let refused = rule { _ = try verifier(.sandbox).verifyAndDecodeNotification(jws) }
        #expect(refused == .x5cMissing)
        #expect(refused?.category == .invalidFormat)
    }

    @Test func malformedCompactTokensAreRefused() throws {
        #expect(rule { _ = try verifier(.sandbox).verifyAndDecodeNotification("a.b.c.d") } == .partCount)
        #expect(rule { _ = try verifier(.sandbox).verifyAndDecodeNotification("a.b.c") } == .base64)
    }

    @Test func testChainValidatesAtEffectiveDateAndReturnsLeafKey() throws {
        let chain = try ChainVerifier(roots: [Certificate(contentsOf: Conformance.url("certs/testCA.der"))]).verify(
            leaf: Certificate(contentsOf: Conformance.url("certs/from-test-source/test-leaf.der")),
            intermediate: Certificate(contentsOf: Conformance.url("certs/from-test-source/test-intermediate-ca.der")),
            at: Self.effectiveDate)
        #expect(chain.leafKey.pem == (try Conformance.text("certs/from-test-source/test-leaf-public-key.pem")) + "\n")
        #expect(chain.leaf.serialNumberHex == "0C")
        #expect(chain.intermediate.serialNumberHex == "0B")
    }

    func chainRule(
        leaf: String, intermediate: String, root: String = "certs/testCA.der", at instant: Timestamp = effectiveDate
    ) -> TrustRule? {
        rule {
            _ = try ChainVerifier(roots: [Certificate(contentsOf: Conformance.url(root))]).verify(
                leaf: Certificate(contentsOf: Conformance.url("certs/from-test-source/\(leaf).der")),
                intermediate: Certificate(contentsOf: Conformance.url("certs/from-test-source/\(intermediate).der")),
                at: instant)
        }
    }

    @Test func testChainFailsWhenExpiredOrUnderAnotherRoot() {
        #expect(
            chainRule(
                leaf: "test-leaf", intermediate: "test-intermediate-ca",
                at: Timestamp(millisecondsSince1970: 2_280_946_846_000)) == .chainExpired)
        #expect(
            chainRule(
                leaf: "test-leaf", intermediate: "test-intermediate-ca",
                root: "certs/from-test-source/apple-root-ca-g3.der") == .chainUntrusted)
    }

    @Test func chainsWithoutAppleOIDsFail() {
        #expect(
            chainRule(leaf: "test-leaf-for-intermediate-invalid-oid", intermediate: "test-intermediate-ca-invalid-oid")
                == .intermediateOIDMissing)
        #expect(chainRule(leaf: "test-leaf-invalid-oid", intermediate: "test-intermediate-ca") == .leafOIDMissing)
    }

    @Test func realAppleChainValidatesAtEffectiveDate() throws {
        let root = try Certificate(contentsOf: Conformance.url("certs/from-test-source/apple-root-ca-g3.der"))
        #expect(Digest.hex(root.sha256Fingerprint) == AppleOIDs.appleRootCAG3SHA256)
        let chain = try ChainVerifier(roots: [root]).verify(
            leaf: Certificate(
                contentsOf: Conformance.url("certs/from-test-source/apple-receipt-signing-leaf-2025.der")),
            intermediate: Certificate(
                contentsOf: Conformance.url("certs/from-test-source/apple-wwdr-g6-intermediate.der")),
            at: Self.effectiveDate)
        #expect(chain.intermediate.ocspURLs == ["http://ocsp.apple.com/ocsp03-applerootcag3"])
        #expect(chain.leaf.ocspURLs == ["http://ocsp.apple.com/ocsp03-wwdrg602"])
    }

    @Test func xcodeTransactionDecodesWithoutSignatureChecks() throws {
        let verifier = try verifier(.xcode, bundleId: "com.example.naturelab.backyardbirds.example", appAppleId: nil)
        let payload = try verifier.verifyAndDecodeTransaction(Conformance.text("xcode/xcode-signed-transaction"))
            .payload
        #expect(payload.transactionId == "0")
        #expect(payload.originalTransactionId == "0")
        #expect(payload.webOrderLineItemId == "0")
        #expect(payload.productId == "pass.premium")
        #expect(payload.subscriptionGroupIdentifier == "6F3A93AB")
        #expect(payload.purchaseDate == Timestamp(millisecondsSince1970: 1_697_679_936_049))
        #expect(payload.originalPurchaseDate == Timestamp(millisecondsSince1970: 1_697_679_936_049))
        #expect(payload.expiresDate == Timestamp(millisecondsSince1970: 1_700_358_336_049))
        #expect(payload.quantity == 1)
        #expect(payload.type == .autoRenewableSubscription)
        #expect(payload.inAppOwnershipType == .purchased)
        #expect(payload.signedDate == Timestamp(millisecondsSince1970: 1_697_679_936_056))
        #expect(payload.isUpgraded == false)
        #expect(payload.offerType == .introductoryOffer)
        #expect(payload.environment == .xcode)
        #expect(payload.storefront == "USA")
        #expect(payload.storefrontId == "143441")
        #expect(payload.transactionReason == .purchase)
        #expect(payload.appAccountToken == nil)
        #expect(payload.revocationDate == nil)
        #expect(payload.revocationReason == nil)
        #expect(payload.offerIdentifier == nil)
    }

    @Test func xcodeRenewalInfoAndAppTransactionDecode() throws {
        let verifier = try verifier(.xcode, bundleId: "com.example.naturelab.backyardbirds.example", appAppleId: nil)
        let renewal = try verifier.verifyAndDecodeRenewalInfo(Conformance.text("xcode/xcode-signed-renewal-info"))
            .payload
        #expect(renewal.originalTransactionId == "0")
        #expect(renewal.productId == "pass.premium")
        #expect(renewal.autoRenewProductId == "pass.premium")
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.signedDate == Timestamp(millisecondsSince1970: 1_697_679_936_711))
        #expect(renewal.recentSubscriptionStartDate == Timestamp(millisecondsSince1970: 1_697_679_936_049))
        #expect(renewal.renewalDate == Timestamp(millisecondsSince1970: 1_700_358_336_049))
        #expect(renewal.expirationIntent == nil)
        #expect(renewal.gracePeriodExpiresDate == nil)

        let app = try verifier.verifyAndDecodeAppTransaction(Conformance.text("xcode/xcode-signed-app-transaction"))
            .payload
        #expect(app.appAppleId == nil)
        #expect(app.applicationVersion == "1")
        #expect(app.originalApplicationVersion == "1")
        #expect(app.deviceVerification == "cYUsXc53EbYc0pOeXG5d6/31LGHeVGf84sqSN0OrJi5u/j2H89WWKgS8N0hMsMlf")
        #expect(app.deviceVerificationNonce == UUID(uuidString: "48c8b92d-ce0d-4229-bedf-e61b4f9cfc92"))
        #expect(app.receiptType == .xcode)
        #expect(app.originalPurchaseDate == Timestamp(millisecondsSince1970: -62_135_769_600_000))
        #expect(app.preorderDate == nil)
    }

    @Test func xcodeAppTransactionIsRefusedByProductionVerifier() throws {
        let verifier = try verifier(.production, bundleId: "com.example.naturelab.backyardbirds.example", appAppleId: 1)
        let refused = rule {
            _ = try verifier.verifyAndDecodeAppTransaction(Conformance.text("xcode/xcode-signed-app-transaction"))
        }
        #expect(refused == .chainLength)
    }

    /// The unsigned model files, wrapped the way Apple's tests do: a random key, no x5c,
    /// decoded under LocalTesting.
    func localTestingJWS(_ file: String) throws -> String {
        try JWSSigner(key: PrivateKey.generateP256()).sign(
            payload: [UInt8](Conformance.data("models/\(file)")), header: [:])
    }

    @Test func localTestingNotificationsUseDataSummaryAppDataOrToken() throws {
        let verifier = try verifier(.localTesting, appAppleId: 41234)
        let notification = try verifier.verifyAndDecodeNotification(localTestingJWS("signedNotification.json")).payload
        #expect(notification.notificationType == .subscribed)
        #expect(notification.subtype == .initialBuy)
        #expect(notification.data?.signedTransactionInfo == "signed_transaction_info_value")
        let summary = try verifier.verifyAndDecodeNotification(localTestingJWS("signedSummaryNotification.json"))
            .payload
        #expect(summary.summary?.succeededCount == 5)
        #expect(summary.summary?.failedCount == 2)
        let rescind = try verifier.verifyAndDecodeNotification(localTestingJWS("signedRescindConsentNotification.json"))
            .payload
        #expect(rescind.appData?.signedAppTransactionInfo == "signed_app_transaction_info_value")
        // External purchase tokens derive their environment: Production for this id.
        #expect(
            rule {
                _ = try verifier.verifyAndDecodeNotification(
                    localTestingJWS("signedExternalPurchaseTokenNotification.json"))
            } == .environmentMismatch)
        let token = try verifier.verify(
            localTestingJWS("signedExternalPurchaseTokenNotification.json"), as: ResponseBodyV2DecodedPayload.self,
            kind: .notification
        ) { _ in nil }
        #expect(token.payload.externalPurchaseToken?.derivedEnvironment == .production)
        #expect(token.payload.externalPurchaseToken?.appAppleId == 55555)
        let sandbox = try verifier.verify(
            localTestingJWS("signedExternalPurchaseTokenSandboxNotification.json"),
            as: ResponseBodyV2DecodedPayload.self, kind: .notification
        ) { _ in nil }
        #expect(sandbox.payload.externalPurchaseToken?.derivedEnvironment == .sandbox)
    }

    @Test func localTestingTransactionAndRenewalDecode() throws {
        let verifier = try verifier(.localTesting)
        let transaction = try verifier.verifyAndDecodeTransaction(localTestingJWS("signedTransaction.json")).payload
        #expect(transaction.transactionId == "23456")
        #expect(transaction.revocationReason == .refundedDueToIssue)
        #expect(transaction.price == 10990)
        let renewal = try verifier.verifyAndDecodeRenewalInfo(localTestingJWS("signedRenewalInfo.json")).payload
        #expect(renewal.autoRenewProductId == "com.example.product.2")
        #expect(renewal.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
    }
}
