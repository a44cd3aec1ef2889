import AppStoreModels
import Foundation
import Testing

/// App Store Server Notifications V1 bodies.
struct NotificationV1Tests {
    static let didRenew = #"""
        {
          "notification_type": "DID_RENEW",
          "password": "0123456789abcdef0123456789abcdef",
          "environment": "PROD",
          "auto_renew_adam_id": "1500000001",
          "auto_renew_product_id": "pass.premium",
          "auto_renew_status": "true",
          "auto_renew_status_change_date": "2023-10-19 01:45:36 Etc/GMT",
          "auto_renew_status_change_date_ms": "1697679936000",
          "auto_renew_status_change_date_pst": "2023-10-18 18:45:36 America/Los_Angeles",
          "bid": "com.example.birds",
          "bvrs": "42",
          "original_transaction_id": 2000000440000001,
          "web_order_line_item_id": "2000000031000002",
          "unified_receipt": {
            "environment": "Production",
            "latest_receipt": "TUlJLi4u",
            "status": 0,
            "latest_receipt_info": [
              {"quantity": "1", "product_id": "pass.premium", "transaction_id": "2000000440000002",
               "original_transaction_id": "2000000440000001", "purchase_date_ms": "1700358336000",
               "expires_date_ms": "1702950336000", "is_trial_period": "false", "is_in_intro_offer_period": "false"}
            ],
            "pending_renewal_info": [
              {"auto_renew_product_id": "pass.premium", "auto_renew_status": "1", "product_id": "pass.premium",
               "original_transaction_id": "2000000440000001"}
            ]
          }
        }
        """#

    @Test func didRenew() throws {
        let body = try AppStoreJSON.decode(ResponseBodyV1.self, from: Self.didRenew.utf8Data)
        #expect(body.notificationType == .didRenew)
        #expect(body.notificationType?.rawValue == "DID_RENEW")
        #expect(body.environment == .production)
        #expect(body.environment?.rawValue == "PROD")
        #expect(body.password == "0123456789abcdef0123456789abcdef")
        #expect(body.autoRenewAdamId == "1500000001")
        #expect(body.autoRenewProductId == "pass.premium")
        #expect(body.autoRenewStatus == true)
        #expect(body.autoRenewStatusChangeDate == Timestamp(millisecondsSince1970: 1_697_679_936_000))
        #expect(body.bid == "com.example.birds")
        #expect(body.bvrs == "42")
        #expect(body.originalTransactionId == "2000000440000001")
        #expect(body.webOrderLineItemId == "2000000031000002")
        let receipt = try #require(body.unifiedReceipt)
        #expect(receipt.environment == .production)
        #expect(receipt.latestReceipt == "TUlJLi4u")
        #expect(receipt.status == .valid)
        #expect(
            receipt.latestReceiptInfo?.first?.expiresDate
                == Timestamp(millisecondsSince1970: 1_702_950_336_000))
        #expect(receipt.pendingRenewalInfo?.first?.autoRenewStatus == .on)
        #expect(try reencoded(body) == body)
        #expect(!"\(body)".contains("0123456789abcdef"))
    }

    @Test func cancelWithPacificDatesOnly() throws {
        let json = #"""
            {"notification_type": "CANCEL", "environment": "Sandbox", "auto_renew_status": "false",
             "cancellation_date_pst": "2024-03-10 03:30:00 America/Los_Angeles", "expiration_intent": 1,
             "bid": "com.example.birds", "original_transaction_id": "1000000000000001"}
            """#
        let body = try AppStoreJSON.decode(ResponseBodyV1.self, from: json.utf8Data)
        #expect(body.notificationType == .cancel)
        #expect(body.environment == .sandbox)
        #expect(body.environment?.value?.appStoreEnvironment == .sandbox)
        #expect(body.autoRenewStatus == false)
        #expect(body.expirationIntent == .customerCancelled)
        // 03:30 PDT (first hour of daylight time in 2024) is 10:30 UTC.
        #expect(body.cancellationDate == Timestamp(millisecondsSince1970: 1_710_066_600_000))
        #expect(try reencoded(body) == body)
    }

    @Test func unknownNotificationTypeIsKeptRaw() throws {
        let json =
            #"{"notification_type":"DID_TELEPORT","environment":"STAGING","bid":"com.example.birds"}"#
        let body = try AppStoreJSON.decode(ResponseBodyV1.self, from: json.utf8Data)
        #expect(body.notificationType?.value == nil)
        #expect(body.notificationType?.rawValue == "DID_TELEPORT")
        #expect(body.environment?.value == nil)
        #expect(body.environment?.rawValue == "STAGING")
        let written = try AppStoreJSON.decode(JSONValue.self, from: AppStoreJSON.encode(body))
        #expect(
            written
                == .object([
                    "notification_type": .string("DID_TELEPORT"), "environment": .string("STAGING"),
                    "bid": .string("com.example.birds"),
                ]))
    }

    @Test(arguments: NotificationTypeV1.allCases)
    func everyNotificationType(type: NotificationTypeV1) throws {
        let body = try AppStoreJSON.decode(
            ResponseBodyV1.self, from: #"{"notification_type":"\#(type.rawValue)"}"#.utf8Data)
        #expect(body.notificationType == type)
        #expect(try reencoded(body) == body)
    }
}

/// The legacy date text and the three-forms rule.
struct LegacyDateTests {
    func decodeDate(_ fields: String) throws -> Timestamp? {
        try AppStoreJSON.decode(LegacyInAppPurchase.self, from: "{\(fields)}".utf8Data).purchaseDate
    }

    @Test func eachFormAloneGivesTheSameInstant() throws {
        let expected = Timestamp(millisecondsSince1970: 1_697_679_936_000)
        #expect(try decodeDate(#""purchase_date_ms":"1697679936000""#) == expected)
        #expect(try decodeDate(#""purchase_date_ms":1697679936000"#) == expected)
        #expect(try decodeDate(#""purchase_date":"2023-10-19 01:45:36 Etc/GMT""#) == expected)
        #expect(
            try decodeDate(#""purchase_date_pst":"2023-10-18 18:45:36 America/Los_Angeles""#) == expected)
        #expect(try decodeDate(#""purchase_date":"2023-10-19T01:45:36Z""#) == expected)
    }

    @Test func millisecondsWinOverText() throws {
        // `_ms` carries milliseconds; the text forms are whole seconds and may disagree.
        let date = try decodeDate(
            #""purchase_date":"2023-10-19 01:45:36 Etc/GMT","purchase_date_ms":"1697679936049","purchase_date_pst":"2001-01-01 00:00:00 America/Los_Angeles""#
        )
        #expect(date == Timestamp(millisecondsSince1970: 1_697_679_936_049))
    }

    @Test func ambiguousPacificHourResolvesToTheEarlierInstant() throws {
        // 01:00–01:59 happens twice when daylight time ends; the text cannot say which, so it
        // reads as the first (daylight) one. This is why `_ms` is preferred whenever present.
        let date = try decodeDate(#""purchase_date_pst":"2024-11-03 01:00:00 America/Los_Angeles""#)
        #expect(date == Timestamp(millisecondsSince1970: 1_730_620_800_000))
    }

    @Test func writesAllThreeForms() throws {
        var purchase = LegacyInAppPurchase()
        purchase.purchaseDate = Timestamp(millisecondsSince1970: 1_704_067_199_999)  // 2023-12-31T23:59:59.999Z
        let json = try AppStoreJSON.decode(JSONValue.self, from: AppStoreJSON.encode(purchase))
        #expect(
            json
                == .object([
                    "purchase_date_ms": .string("1704067199999"),
                    "purchase_date": .string("2023-12-31 23:59:59 Etc/GMT"),
                    "purchase_date_pst": .string("2023-12-31 15:59:59 America/Los_Angeles"),
                ]))
        #expect(try reencoded(purchase) == purchase)
    }

    @Test func textFormsRoundTripAcrossDaylightSavingAndOldDates() throws {
        // Leap day 2000, spring-forward 2024 (03:00 PDT), the first 01:00 of fall-back 2024, after it, before 1970.
        for milliseconds: Int64 in [
            0, 951_782_400_000, 1_710_064_800_000, 1_730_620_800_000, 1_730_628_000_000, -86_400_000,
        ] {
            var purchase = LegacyInAppPurchase()
            purchase.purchaseDate = Timestamp(millisecondsSince1970: milliseconds)
            let json = try AppStoreJSON.decode(JSONValue.self, from: AppStoreJSON.encode(purchase))
            guard case .object(var fields) = json else { continue }
            fields["purchase_date_ms"] = nil
            let fromGMT = try AppStoreJSON.decode(
                LegacyInAppPurchase.self,
                from: AppStoreJSON.encode(JSONValue.object(["purchase_date": fields["purchase_date"]!])))
            let fromPacific = try AppStoreJSON.decode(
                LegacyInAppPurchase.self,
                from: AppStoreJSON.encode(
                    JSONValue.object(["purchase_date_pst": fields["purchase_date_pst"]!])))
            #expect(fromGMT.purchaseDate == purchase.purchaseDate, "\(milliseconds)")
            #expect(fromPacific.purchaseDate == purchase.purchaseDate, "\(milliseconds)")
        }
    }
}

/// verifyReceipt status codes: meaning and classification.
struct VerifyReceiptStatusTests {
    @Test(arguments: [
        (Int64(0), VerifyReceiptStatus.Kind.valid),
        (21000, .badRequest), (21001, .badRequest),
        (21002, .badReceipt), (21003, .badReceipt), (21010, .badReceipt),
        (21004, .configurationError),
        (21005, .retryable), (21009, .retryable), (21100, .retryable), (21150, .retryable),
        (21199, .retryable),
        (21006, .validButSubscriptionExpired),
        (21007, .sandboxReceiptSentToProduction),
        (21008, .productionReceiptSentToSandbox),
        (21200, .unknown), (21011, .unknown), (-1, .unknown),
    ])
    func classification(code: Int64, kind: VerifyReceiptStatus.Kind) throws {
        let status = VerifyReceiptStatus(rawValue: code)
        #expect(status.kind == kind)
        #expect(status.isRetryable == (kind == .retryable))
        #expect(!status.meaning.isEmpty)
        let decoded = try AppStoreJSON.decode(VerifyReceiptStatus.self, from: "\(code)".utf8Data)
        #expect(decoded == status)
        #expect(
            try AppStoreJSON.decode(VerifyReceiptStatus.self, from: "\"\(code)\"".utf8Data) == status)
        #expect(AppStoreJSON.encode(status) == "\(code)".utf8Data)
    }

    @Test func meaningsFollowApple() {
        #expect(VerifyReceiptStatus.sharedSecretMismatch.meaning.contains("shared secret"))
        #expect(VerifyReceiptStatus.sandboxReceiptSentToProduction.meaning.contains("test environment"))
        #expect(VerifyReceiptStatus.productionReceiptSentToSandbox.rawValue == 21008)
        #expect(VerifyReceiptStatus(rawValue: 21123).meaning == "Internal data access error.")
        #expect(VerifyReceiptStatus(rawValue: 31000).meaning == "Unknown status code.")
    }
}
