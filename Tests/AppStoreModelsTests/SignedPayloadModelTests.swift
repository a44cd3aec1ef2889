import AppStoreModels
import Foundation
import Testing

/// The unsigned JSON payloads of Apple's corpus (`models/signed*.json`, …) decode to exactly the
/// values Apple's tests assert, and re-encode without losing a field.
@Suite(.enabled(if: Corpus.isAvailable, Corpus.missingMessage))
struct SignedPayloadModelTests {
    @Test func signedTransaction() throws {
        let t = try decodeLosslessly(
            JWSTransactionDecodedPayload.self, Corpus.model("signedTransaction.json"))
        #expect(t.transactionId == "23456")
        #expect(t.originalTransactionId == "12345")
        #expect(t.webOrderLineItemId == "34343")
        #expect(t.bundleId == "com.example")
        #expect(t.productId == "com.example.product")
        #expect(t.subscriptionGroupIdentifier == "55555")
        #expect(t.purchaseDate == Timestamp(millisecondsSince1970: 1_698_148_900_000))
        #expect(t.originalPurchaseDate == Timestamp(millisecondsSince1970: 1_698_148_800_000))
        #expect(t.expiresDate == Timestamp(millisecondsSince1970: 1_698_149_000_000))
        #expect(t.quantity == 1)
        #expect(t.type == .autoRenewableSubscription)
        #expect(t.type?.rawValue == "Auto-Renewable Subscription")
        #expect(t.appAccountToken == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(t.inAppOwnershipType == .purchased)
        #expect(t.signedDate == Timestamp(millisecondsSince1970: 1_698_148_900_000))
        #expect(t.revocationReason == .refundedDueToIssue)
        #expect(t.revocationReason?.rawValue == 1)
        #expect(t.revocationDate == Timestamp(millisecondsSince1970: 1_698_148_950_000))
        #expect(t.isUpgraded == true)
        #expect(t.offerType == .introductoryOffer)
        #expect(t.offerIdentifier == "abc.123")
        #expect(t.environment == .localTesting)
        #expect(t.transactionReason == .purchase)
        #expect(t.storefront == "USA")
        #expect(t.storefrontId == "143441")
        #expect(t.price == 10990)
        #expect(t.currency == "USD")
        #expect(t.offerDiscountType == .payAsYouGo)
        #expect(t.appTransactionId == "71134")
        #expect(t.offerPeriod == "P1Y")
        #expect(t.billingPlanType == "MONTHLY")
        #expect(
            t.commitmentInfo
                == .object([
                    "billingPeriodNumber": .integer(3), "commitmentExpiresDate": .integer(1_698_150_000_000),
                    "commitmentPrice": .integer(119_880), "totalBillingPeriods": .integer(12),
                ]))
        guard case .object(let info)? = t.advancedCommerceInfo, case .array(let items)? = info["items"],
            case .object(let item)? = items.first
        else {
            Issue.record("advancedCommerceInfo.items missing")
            return
        }
        #expect(item["SKU"] == .string("com.example.sku.premium"))
        #expect(item["refunds"] != nil)
    }

    @Test func signedTransactionWithRevocation() throws {
        let t = try decodeLosslessly(
            JWSTransactionDecodedPayload.self, Corpus.model("signedTransactionWithRevocation.json"))
        #expect(t.revocationType == .refundProrated)
        #expect(t.revocationType?.rawValue == "REFUND_PRORATED")
        #expect(t.revocationPercentage == 50_000)
        #expect(t.transactionId == "23456")
        #expect(t.revocationDate == Timestamp(millisecondsSince1970: 1_698_148_950_000))
    }

    @Test func signedRenewalInfo() throws {
        let r = try decodeLosslessly(
            JWSRenewalInfoDecodedPayload.self, Corpus.model("signedRenewalInfo.json"))
        #expect(r.expirationIntent == .customerCancelled)
        #expect(r.originalTransactionId == "12345")
        #expect(r.autoRenewProductId == "com.example.product.2")
        #expect(r.productId == "com.example.product")
        #expect(r.autoRenewStatus == .on)
        #expect(r.isInBillingRetryPeriod == true)
        #expect(r.priceIncreaseStatus == .customerHasNotResponded)
        #expect(r.gracePeriodExpiresDate == Timestamp(millisecondsSince1970: 1_698_148_900_000))
        #expect(r.offerType == .promotionalOffer)
        #expect(r.offerIdentifier == "abc.123")
        #expect(r.signedDate == Timestamp(millisecondsSince1970: 1_698_148_800_000))
        #expect(r.environment == .localTesting)
        #expect(r.recentSubscriptionStartDate == Timestamp(millisecondsSince1970: 1_698_148_800_000))
        #expect(r.renewalDate == Timestamp(millisecondsSince1970: 1_698_148_850_000))
        #expect(r.renewalPrice == 9990)
        #expect(r.currency == "USD")
        #expect(r.offerDiscountType == .payAsYouGo)
        #expect(r.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(r.appTransactionId == "71134")
        #expect(r.offerPeriod == "P1Y")
        #expect(r.appAccountToken == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(r.renewalBillingPlanType == "MONTHLY")
        guard case .object(let commitment)? = r.commitmentInfo else {
            Issue.record("commitmentInfo missing")
            return
        }
        #expect(commitment["commitmentRenewalPrice"] == .integer(9990))
        guard case .object(let info)? = r.advancedCommerceInfo else {
            Issue.record("advancedCommerceInfo missing")
            return
        }
        #expect(info["consistencyToken"] == .string("token-abc-123"))
    }

    @Test func signedNotification() throws {
        let n = try decodeLosslessly(
            ResponseBodyV2DecodedPayload.self, Corpus.model("signedNotification.json"))
        #expect(n.notificationType == .subscribed)
        #expect(n.subtype == .initialBuy)
        #expect(n.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(n.version == "2.0")
        #expect(n.signedDate == Timestamp(millisecondsSince1970: 1_698_148_900_000))
        #expect(n.data?.environment == .localTesting)
        #expect(n.data?.appAppleId == 41234)
        #expect(n.data?.bundleId == "com.example")
        #expect(n.data?.bundleVersion == "1.2.3")
        #expect(n.data?.signedTransactionInfo == "signed_transaction_info_value")
        #expect(n.data?.signedRenewalInfo == "signed_renewal_info_value")
        #expect(n.data?.status == .active)
        #expect(n.summary == nil && n.externalPurchaseToken == nil && n.appData == nil)
    }

    @Test func consumptionRequestNotification() throws {
        let n = try decodeLosslessly(
            ResponseBodyV2DecodedPayload.self, Corpus.model("signedConsumptionRequestNotification.json"))
        #expect(n.notificationType == .consumptionRequest)
        #expect(n.subtype == nil)
        #expect(n.data?.consumptionRequestReason == .unintendedPurchase)
        #expect(n.data?.appAppleId == 41234)
        #expect(n.data?.status == .active)
    }

    @Test func summaryNotification() throws {
        let n = try decodeLosslessly(
            ResponseBodyV2DecodedPayload.self, Corpus.model("signedSummaryNotification.json"))
        #expect(n.notificationType == .renewalExtension)
        #expect(n.subtype == .summary)
        #expect(n.data == nil)
        let s = try #require(n.summary)
        #expect(s.environment == .localTesting)
        #expect(s.appAppleId == 41234)
        #expect(s.bundleId == "com.example")
        #expect(s.productId == "com.example.product")
        #expect(s.requestIdentifier == "efb27071-45a4-4aca-9854-2a1e9146f265")
        #expect(s.storefrontCountryCodes == ["CAN", "USA", "MEX"])
        #expect(s.succeededCount == 5)
        #expect(s.failedCount == 2)
    }

    @Test(arguments: [
        (
            "signedExternalPurchaseTokenNotification.json", "b2158121-7af9-49d4-9561-1f588205523e",
            AppStoreEnvironment.production
        ),
        (
            "signedExternalPurchaseTokenSandboxNotification.json",
            "SANDBOX_b2158121-7af9-49d4-9561-1f588205523e", .sandbox
        ),
    ])
    func externalPurchaseTokenNotification(file: String, id: String, environment: AppStoreEnvironment)
        throws
    {
        let n = try decodeLosslessly(ResponseBodyV2DecodedPayload.self, Corpus.model(file))
        #expect(n.notificationType == .externalPurchaseToken)
        #expect(n.subtype == .unreported)
        let token = try #require(n.externalPurchaseToken)
        #expect(token.externalPurchaseId == id)
        #expect(token.tokenCreationDate == Timestamp(millisecondsSince1970: 1_698_148_950_000))
        #expect(token.appAppleId == 55555)
        #expect(token.bundleId == "com.example")
        #expect(token.derivedEnvironment == environment)
    }

    @Test func rescindConsentNotification() throws {
        let n = try decodeLosslessly(
            ResponseBodyV2DecodedPayload.self, Corpus.model("signedRescindConsentNotification.json"))
        #expect(n.notificationType == .rescindConsent)
        #expect(n.data == nil && n.summary == nil)
        let app = try #require(n.appData)
        #expect(app.appAppleId == 41234)
        #expect(app.bundleId == "com.example")
        #expect(app.environment == .localTesting)
        #expect(app.signedAppTransactionInfo == "signed_app_transaction_info_value")
    }

    @Test func appTransaction() throws {
        let a = try decodeLosslessly(AppTransaction.self, Corpus.model("appTransaction.json"))
        #expect(a.receiptType == .localTesting)
        #expect(a.appAppleId == 531412)
        #expect(a.bundleId == "com.example")
        #expect(a.applicationVersion == "1.2.3")
        #expect(a.versionExternalIdentifier == 512)
        #expect(a.receiptCreationDate == Timestamp(millisecondsSince1970: 1_698_148_900_000))
        #expect(a.originalPurchaseDate == Timestamp(millisecondsSince1970: 1_698_148_800_000))
        #expect(a.originalApplicationVersion == "1.1.2")
        #expect(a.deviceVerification == "device_verification_value")
        #expect(a.deviceVerificationNonce == UUID(uuidString: "48ccfa42-7431-4f22-9908-7e88983e105a"))
        #expect(a.preorderDate == Timestamp(millisecondsSince1970: 1_698_148_700_000))
        #expect(a.appTransactionId == "71134")
        #expect(a.originalPlatform == .iOS)
    }

    @Test func appData() throws {
        let a = try decodeLosslessly(AppData.self, Corpus.model("appData.json"))
        #expect(a.appAppleId == 987_654_321)
        #expect(a.bundleId == "com.example")
        #expect(a.environment == .sandbox)
        #expect(a.signedAppTransactionInfo == "signed-app-transaction-info")
    }

    @Test func decodedRealtimeRequest() throws {
        let r = try decodeLosslessly(
            DecodedRealtimeRequestBody.self, Corpus.model("decodedRealtimeRequest.json"))
        #expect(r.originalTransactionId == "99371282")
        #expect(r.appAppleId == 531412)
        #expect(r.productId == "com.example.product")
        #expect(r.userLocale == "en-US")
        #expect(r.requestIdentifier == UUID(uuidString: "3db5c98d-8acf-4e29-831e-8e1f82f9f6e9"))
        #expect(r.environment == .localTesting)
        #expect(r.signedDate == Timestamp(millisecondsSince1970: 1_698_148_900_000))
    }
}
