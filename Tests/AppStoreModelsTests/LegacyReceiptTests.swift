import AppStoreModels
import Foundation
import Testing

/// verifyReceipt bodies: every spelling Apple has used decodes to typed values, and encoding
/// writes Apple's spelling back.
struct LegacyReceiptTests {
    /// A production-shaped verifyReceipt answer: strings for numbers and booleans, the three date
    /// forms, `latest_receipt_info` deliberately out of order, one entry with JSON scalars and
    /// only text dates (as older responses had).
    static let response = #"""
        {
          "status": 0,
          "environment": "Production",
          "receipt": {
            "receipt_type": "Production", "adam_id": 1234567890, "app_item_id": 1234567890,
            "bundle_id": "com.example.birds", "application_version": "42", "download_id": 84000001,
            "version_external_identifier": 860123456,
            "receipt_creation_date": "2023-10-19 01:45:40 Etc/GMT", "receipt_creation_date_ms": "1697679940000",
            "receipt_creation_date_pst": "2023-10-18 18:45:40 America/Los_Angeles",
            "request_date": "2023-10-20 08:00:00 Etc/GMT", "request_date_ms": "1697788800000",
            "request_date_pst": "2023-10-20 01:00:00 America/Los_Angeles",
            "original_purchase_date": "2022-01-02 03:04:05 Etc/GMT", "original_purchase_date_ms": "1641092645000",
            "original_purchase_date_pst": "2022-01-01 19:04:05 America/Los_Angeles",
            "original_application_version": "1.0",
            "in_app": [
              {"quantity": "1", "product_id": "pass.premium", "transaction_id": "2000000440000001",
               "original_transaction_id": "2000000440000001",
               "purchase_date": "2023-10-19 01:45:36 Etc/GMT", "purchase_date_ms": "1697679936000",
               "purchase_date_pst": "2023-10-18 18:45:36 America/Los_Angeles",
               "original_purchase_date": "2023-10-19 01:45:36 Etc/GMT", "original_purchase_date_ms": "1697679936000",
               "original_purchase_date_pst": "2023-10-18 18:45:36 America/Los_Angeles",
               "expires_date": "2023-11-19 01:45:36 Etc/GMT", "expires_date_ms": "1700358336000",
               "expires_date_pst": "2023-11-18 17:45:36 America/Los_Angeles",
               "web_order_line_item_id": "2000000031000001", "is_trial_period": "true", "is_in_intro_offer_period": "false",
               "in_app_ownership_type": "PURCHASED"}
            ]
          },
          "latest_receipt": "TUlJLi4u",
          "latest_receipt_info": [
            {"quantity": "1", "product_id": "pass.premium", "transaction_id": "2000000440000003",
             "original_transaction_id": "2000000440000001",
             "purchase_date": "2023-12-19 01:45:36 Etc/GMT", "purchase_date_ms": "1702950336000",
             "purchase_date_pst": "2023-12-18 17:45:36 America/Los_Angeles",
             "expires_date_ms": "1705628736000",
             "web_order_line_item_id": "2000000031000003", "is_trial_period": "false", "is_in_intro_offer_period": "false",
             "cancellation_date": "2023-12-20 10:00:00 Etc/GMT", "cancellation_date_ms": "1703066400000",
             "cancellation_date_pst": "2023-12-20 02:00:00 America/Los_Angeles", "cancellation_reason": "1",
             "in_app_ownership_type": "PURCHASED", "subscription_group_identifier": "20900001",
             "promotional_offer_id": "winback1", "offer_code_ref_name": "SPRING", "is_upgraded": "true",
             "app_account_token": "7e3fb20b-4cdb-47cc-936d-99d65f608138"},
            {"quantity": 1, "product_id": "pass.premium", "transaction_id": 2000000440000001,
             "original_transaction_id": "2000000440000001",
             "purchase_date": "2023-10-19 01:45:36 Etc/GMT",
             "expires_date_pst": "2023-11-18 17:45:36 America/Los_Angeles",
             "is_trial_period": true, "is_in_intro_offer_period": 0, "in_app_ownership_type": "FAMILY_SHARED"},
            {"quantity": "1", "product_id": "pass.premium", "transaction_id": "2000000440000002",
             "original_transaction_id": "2000000440000001",
             "purchase_date_ms": "1700358336000", "is_trial_period": "false", "is_in_intro_offer_period": "",
             "in_app_ownership_type": "SHARED_WITH_A_COUSIN"}
          ],
          "pending_renewal_info": [
            {"auto_renew_product_id": "pass.premium.yearly", "product_id": "pass.premium",
             "original_transaction_id": "2000000440000001", "auto_renew_status": "1", "expiration_intent": "2",
             "is_in_billing_retry_period": "1", "grace_period_expires_date": "2024-01-21 01:45:36 Etc/GMT",
             "grace_period_expires_date_ms": "1705801536000",
             "grace_period_expires_date_pst": "2024-01-20 17:45:36 America/Los_Angeles",
             "price_consent_status": "0", "price_increase_status": "1", "offer_code_ref_name": "SPRING",
             "promotional_offer_id": "winback1"}
          ]
        }
        """#

    @Test func decodesEverySpelling() throws {
        let body = try AppStoreJSON.decode(VerifyReceiptResponseBody.self, from: Self.response.utf8Data)
        #expect(body.status == .valid)
        #expect(body.status?.kind == .valid)
        #expect(body.environment == .production)
        #expect(body.latestReceipt == "TUlJLi4u")

        let receipt = try #require(body.receipt)
        #expect(receipt.receiptType == "Production")
        #expect(receipt.adamId == 1_234_567_890)
        #expect(receipt.appItemId == 1_234_567_890)
        #expect(receipt.bundleId == "com.example.birds")
        #expect(receipt.applicationVersion == "42")
        #expect(receipt.downloadId == 84_000_001)
        #expect(receipt.versionExternalIdentifier == 860_123_456)
        #expect(receipt.receiptCreationDate == Timestamp(millisecondsSince1970: 1_697_679_940_000))
        #expect(receipt.requestDate == Timestamp(millisecondsSince1970: 1_697_788_800_000))
        #expect(receipt.originalPurchaseDate == Timestamp(millisecondsSince1970: 1_641_092_645_000))
        #expect(receipt.originalApplicationVersion == "1.0")

        let inApp = try #require(receipt.inApp?.first)
        #expect(inApp.quantity == 1)
        #expect(inApp.isTrialPeriod == true)
        #expect(inApp.isInIntroOfferPeriod == false)
        #expect(inApp.purchaseDate == Timestamp(millisecondsSince1970: 1_697_679_936_000))
        #expect(inApp.expiresDate == Timestamp(millisecondsSince1970: 1_700_358_336_000))
        #expect(inApp.webOrderLineItemId == "2000000031000001")
        #expect(inApp.inAppOwnershipType == .purchased)

        let latest = try #require(body.latestReceiptInfo)
        #expect(latest.count == 3)
        let refunded = latest[0]
        #expect(refunded.transactionId == "2000000440000003")
        #expect(refunded.cancellationDate == Timestamp(millisecondsSince1970: 1_703_066_400_000))
        #expect(refunded.cancellationReason == .refundedDueToIssue)
        #expect(refunded.isUpgraded == true)
        #expect(refunded.subscriptionGroupIdentifier == "20900001")
        #expect(refunded.promotionalOfferId == "winback1")
        #expect(refunded.offerCodeRefName == "SPRING")
        #expect(refunded.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(refunded.expiresDate == Timestamp(millisecondsSince1970: 1_705_628_736_000))

        // JSON numbers and booleans, and dates given only as text.
        let scalars = latest[1]
        #expect(scalars.quantity == 1)
        #expect(scalars.transactionId == "2000000440000001")
        #expect(scalars.isTrialPeriod == true)
        #expect(scalars.isInIntroOfferPeriod == false)
        #expect(scalars.purchaseDate == Timestamp(millisecondsSince1970: 1_697_679_936_000))
        #expect(scalars.expiresDate == Timestamp(millisecondsSince1970: 1_700_358_336_000))
        #expect(scalars.inAppOwnershipType == .familyShared)

        // Empty string means absent; an unknown ownership type is kept raw.
        let third = latest[2]
        #expect(third.isInIntroOfferPeriod == nil)
        #expect(third.inAppOwnershipType?.value == nil)
        #expect(third.inAppOwnershipType?.rawValue == "SHARED_WITH_A_COUSIN")

        let renewal = try #require(body.pendingRenewalInfo?.first)
        #expect(renewal.autoRenewProductId == "pass.premium.yearly")
        #expect(renewal.productId == "pass.premium")
        #expect(renewal.originalTransactionId == "2000000440000001")
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.expirationIntent == .billingError)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.gracePeriodExpiresDate == Timestamp(millisecondsSince1970: 1_705_801_536_000))
        #expect(renewal.priceConsentStatus == .customerHasNotResponded)
        #expect(renewal.priceIncreaseStatus == .customerConsentedOrWasNotifiedWithoutNeedingConsent)
        #expect(renewal.offerCodeRefName == "SPRING")
        #expect(renewal.promotionalOfferId == "winback1")
    }

    @Test func roundTripsAndWritesApplesSpelling() throws {
        let body = try AppStoreJSON.decode(VerifyReceiptResponseBody.self, from: Self.response.utf8Data)
        #expect(try reencoded(body) == body)
        let written = try AppStoreJSON.decode(JSONValue.self, from: AppStoreJSON.encode(body))
        guard case .object(let top) = written, case .array(let latest)? = top["latest_receipt_info"],
            case .object(let scalars) = latest[1],
            case .array(let renewals)? = top["pending_renewal_info"],
            case .object(let renewal) = renewals[0]
        else {
            Issue.record("unexpected shape")
            return
        }
        #expect(top["status"] == .integer(0))
        #expect(scalars["quantity"] == .string("1"))
        #expect(scalars["transaction_id"] == .string("2000000440000001"))
        #expect(scalars["is_trial_period"] == .string("true"))
        #expect(scalars["is_in_intro_offer_period"] == .string("false"))
        #expect(scalars["purchase_date_ms"] == .string("1697679936000"))
        #expect(scalars["purchase_date"] == .string("2023-10-19 01:45:36 Etc/GMT"))
        #expect(scalars["purchase_date_pst"] == .string("2023-10-18 18:45:36 America/Los_Angeles"))
        #expect(renewal["auto_renew_status"] == .string("1"))
        #expect(renewal["is_in_billing_retry_period"] == .string("1"))
        #expect(renewal["expiration_intent"] == .string("2"))
    }

    @Test func sortsLatestReceiptInfoByPurchaseDateWhateverApplesOrder() throws {
        let body = try AppStoreJSON.decode(VerifyReceiptResponseBody.self, from: Self.response.utf8Data)
        let latest = try #require(body.latestReceiptInfo)
        let expected = ["2000000440000001", "2000000440000002", "2000000440000003"]
        #expect(latest.sortedByPurchaseDate().map(\.transactionId) == expected)
        #expect(latest.reversed().sortedByPurchaseDate().map(\.transactionId) == expected)
        #expect(latest.mostRecentPurchase?.transactionId == "2000000440000003")

        var twin = latest[0]
        twin.transactionId = "999"
        #expect(
            [latest[0], twin].sortedByPurchaseDate().map(\.transactionId) == ["999", "2000000440000003"])
        #expect(
            [twin, latest[0]].sortedByPurchaseDate().map(\.transactionId) == ["999", "2000000440000003"])
    }

    @Test func malformedFieldsNameTheirPath() throws {
        let badBool = #"{"status":0,"latest_receipt_info":[{"is_trial_period":"maybe"}]}"#
        let error = #expect(throws: ModelDecodingError.self) {
            try AppStoreJSON.decode(VerifyReceiptResponseBody.self, from: badBool.utf8Data)
        }
        #expect(error?.path == "latest_receipt_info[0].is_trial_period")
        #expect(error?.kind == .invalidValue)

        let badDate = #"{"receipt":{"request_date":"yesterday at noon"}}"#
        let dateError = #expect(throws: ModelDecodingError.self) {
            try AppStoreJSON.decode(VerifyReceiptResponseBody.self, from: badDate.utf8Data)
        }
        #expect(dateError?.path == "receipt.request_date")

        let wrongType = #"{"receipt":{"adam_id":[1]}}"#
        let typeError = #expect(throws: ModelDecodingError.self) {
            try AppStoreJSON.decode(VerifyReceiptResponseBody.self, from: wrongType.utf8Data)
        }
        #expect(typeError?.path == "receipt.adam_id")
        #expect(typeError?.kind == .wrongType)
    }

    @Test func requestBodyUsesHyphenatedKeysAndHidesThePassword() throws {
        let request = VerifyReceiptRequestBody(
            receiptData: "TUlJ", password: "s3cr3t-shared", excludeOldTransactions: true)
        let json = try AppStoreJSON.decode(JSONValue.self, from: AppStoreJSON.encode(request))
        #expect(
            json
                == .object([
                    "receipt-data": .string("TUlJ"), "password": .string("s3cr3t-shared"),
                    "exclude-old-transactions": .bool(true),
                ]))
        #expect(try reencoded(request) == request)
        #expect(!"\(request)".contains("s3cr3t"))
        #expect(!String(reflecting: request).contains("s3cr3t"))
    }

    @Test func errorResponseCarriesRetryHint() throws {
        let body = try AppStoreJSON.decode(
            VerifyReceiptResponseBody.self,
            from: #"{"status":21105,"is-retryable":true,"environment":"Sandbox"}"#.utf8Data)
        #expect(body.status?.kind == .retryable)
        #expect(body.isRetryable == true)
        #expect(body.environment == .sandbox)
        #expect(body.receipt == nil)
        #expect(try reencoded(body) == body)
    }
}
