import Foundation
import Testing

@testable import GooglePlayModels

struct PlayDeveloperAPIModelTests {
    /// A SubscriptionPurchaseV2 with every member the discovery document lists.
    static let subscriptionJSON = """
        {
          "kind": "androidpublisher#subscriptionPurchaseV2",
          "regionCode": "US",
          "startTime": "2024-05-01T10:00:00.123Z",
          "subscriptionState": "SUBSCRIPTION_STATE_CANCELED",
          "latestOrderId": "GPA.0000",
          "linkedPurchaseToken": "OLD_TOKEN",
          "acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED",
          "testPurchase": {},
          "etag": "etag-1",
          "canceledStateContext": {"userInitiatedCancellation": {
              "cancelSurveyResult": {"reason": "CANCEL_SURVEY_REASON_COST_RELATED", "reasonUserInput": ""},
              "cancelTime": "2024-05-10T08:30:00Z"}},
          "pausedStateContext": {"autoResumeTime": "2024-06-01T00:00:00.5Z"},
          "inGracePeriodStateContext": {"renewalDeclined": {"pendingOrderId": "GPA.1"}},
          "onHoldStateContext": {"renewalDeclined": {}},
          "externalAccountIdentifiers": {"externalAccountId": "ext", "obfuscatedExternalAccountId": "acct-1",
                                         "obfuscatedExternalProfileId": "prof-1"},
          "subscribeWithGoogleInfo": {"profileId": "1", "profileName": "n", "emailAddress": "a@b.c",
                                      "givenName": "A", "familyName": "B"},
          "outOfAppPurchaseContext": {"expiredPurchaseToken": "EXPIRED"},
          "lineItems": [
            {"productId": "premium_monthly", "expiryTime": "2024-06-01T10:00:00.123Z",
             "latestSuccessfulOrderId": "GPA.0000..0",
             "autoRenewingPlan": {"autoRenewEnabled": false,
                "recurringPrice": {"currencyCode": "USD", "units": "9", "nanos": 990000000},
                "priceChangeDetails": {"newPrice": {"currencyCode": "USD", "units": "10"},
                   "priceChangeMode": "PRICE_INCREASE", "priceChangeState": "OUTSTANDING",
                   "expectedNewPriceChargeTime": "2024-07-01T10:00:00Z"},
                "installmentDetails": {"initialCommittedPaymentsCount": 12, "subsequentCommittedPaymentsCount": 12,
                   "remainingCommittedPaymentsCount": 11, "pendingCancellation": {}},
                "priceStepUpConsentDetails": {"state": "PENDING", "consentDeadlineTime": "2024-06-15T00:00:00Z",
                   "newPrice": {"currencyCode": "USD", "units": "11"}}},
             "offerDetails": {"basePlanId": "monthly", "offerId": "intro", "offerTags": ["tag1"]},
             "offerPhase": {"prorationPeriod": {"originalOfferPhaseType": "INTRODUCTORY"}},
             "deferredItemReplacement": {"productId": "basic_monthly"},
             "itemReplacement": {"productId": "basic_monthly", "basePlanId": "b", "replacementMode": "WITH_TIME_PRORATION"},
             "signupPromotion": {"vanityCode": {"promotionCode": "SPRING"}}},
            {"productId": "premium_prepaid", "expiryTime": "2024-06-01T10:00:00Z",
             "prepaidPlan": {"allowExtendAfterTime": "2024-05-25T10:00:00Z"},
             "offerPhase": {"freeTrial": {}}, "deferredItemRemoval": {}}
          ]
        }
        """

    @Test func subscriptionPurchaseV2DecodesEveryMember() throws {
        let purchase = try GooglePlayJSON.decode(SubscriptionPurchaseV2.self, from: Data(Self.subscriptionJSON.utf8))
        #expect(purchase.kind == "androidpublisher#subscriptionPurchaseV2")
        #expect(purchase.subscriptionState == .canceled)
        #expect(purchase.subscriptionState?.rawValue == "SUBSCRIPTION_STATE_CANCELED")
        #expect(purchase.acknowledgementState == .acknowledged)
        #expect(purchase.linkedPurchaseToken == "OLD_TOKEN")
        #expect(purchase.testPurchase == TestPurchase())
        #expect(purchase.startTime?.milliseconds == 1_714_557_600_123)
        #expect(purchase.startTime?.text == "2024-05-01T10:00:00.123Z")
        let cancellation = try #require(purchase.canceledStateContext?.userInitiatedCancellation)
        #expect(cancellation.cancelSurveyResult?.reason == .costRelated)
        #expect(cancellation.cancelTime?.milliseconds == 1_715_329_800_000)
        #expect(purchase.pausedStateContext?.autoResumeTime?.milliseconds == 1_717_200_000_500)
        #expect(purchase.inGracePeriodStateContext?.renewalDeclined?.pendingOrderId == "GPA.1")
        #expect(purchase.onHoldStateContext?.renewalDeclined == RenewalDeclinedContext())
        #expect(purchase.externalAccountIdentifiers?.obfuscatedExternalAccountId == "acct-1")
        #expect(purchase.subscribeWithGoogleInfo?.emailAddress == "a@b.c")
        #expect(purchase.outOfAppPurchaseContext?.expiredPurchaseToken == "EXPIRED")
        let items = try #require(purchase.lineItems)
        #expect(items.count == 2)
        #expect(items[0].productId == "premium_monthly")
        #expect(items[0].expiryTime?.milliseconds == 1_717_236_000_123)
        let plan = try #require(items[0].autoRenewingPlan)
        #expect(plan.autoRenewEnabled == false)
        #expect(plan.recurringPrice?.micros == 9_990_000)
        #expect(plan.priceChangeDetails?.priceChangeMode == .priceIncrease)
        #expect(plan.priceChangeDetails?.priceChangeState == .outstanding)
        #expect(plan.installmentDetails?.remainingCommittedPaymentsCount == 11)
        #expect(plan.installmentDetails?.pendingCancellation == PendingCancellation())
        #expect(plan.priceStepUpConsentDetails?.state == .pending)
        #expect(items[0].offerDetails == OfferDetails(basePlanId: "monthly", offerId: "intro", offerTags: ["tag1"]))
        #expect(items[0].offerPhase?.prorationPeriod?.originalOfferPhaseType == .introductory)
        #expect(items[0].deferredItemReplacement?.productId == "basic_monthly")
        #expect(items[0].itemReplacement?.replacementMode == .withTimeProration)
        #expect(items[0].signupPromotion?.vanityCode?.promotionCode == "SPRING")
        #expect(items[1].prepaidPlan?.allowExtendAfterTime?.milliseconds == 1_716_631_200_000)
        #expect(items[1].autoRenewingPlan == nil)
        #expect(items[1].offerPhase?.freeTrial == FreeTrialOfferPhase())
        #expect(items[1].deferredItemRemoval == DeferredItemRemoval())
    }

    @Test func subscriptionStatesAreGooglesStrings() {
        #expect(
            SubscriptionState.allCases.map(\.rawValue) == [
                "SUBSCRIPTION_STATE_UNSPECIFIED", "SUBSCRIPTION_STATE_PENDING", "SUBSCRIPTION_STATE_ACTIVE",
                "SUBSCRIPTION_STATE_PAUSED", "SUBSCRIPTION_STATE_IN_GRACE_PERIOD", "SUBSCRIPTION_STATE_ON_HOLD",
                "SUBSCRIPTION_STATE_CANCELED", "SUBSCRIPTION_STATE_EXPIRED",
                "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED",
            ])
    }

    @Test func unknownStateStringSurvivesRoundTrip() throws {
        let purchase = try GooglePlayJSON.decode(
            SubscriptionPurchaseV2.self, from: Data(#"{"subscriptionState":"SUBSCRIPTION_STATE_NEW_ONE"}"#.utf8))
        #expect(purchase.subscriptionState?.value == nil)
        #expect(purchase.subscriptionState?.rawValue == "SUBSCRIPTION_STATE_NEW_ONE")
        #expect(
            String(decoding: GooglePlayJSON.encode(purchase), as: UTF8.self)
                == #"{"subscriptionState":"SUBSCRIPTION_STATE_NEW_ONE"}"#)
    }

    @Test func malformedTimeNamesItsPath() {
        #expect(
            throws: GooglePlayModelError(.invalidValue, path: "lineItems[0].expiryTime", type: "SubscriptionPurchaseV2")
        ) {
            try GooglePlayJSON.decode(
                SubscriptionPurchaseV2.self, from: Data(#"{"lineItems":[{"expiryTime":"2024-13-01T00:00:00Z"}]}"#.utf8))
        }
    }

    @Test func googleDateTimeReadsEveryFractionLength() {
        #expect(GoogleDateTime("1970-01-01T00:00:00Z")?.milliseconds == 0)
        #expect(GoogleDateTime("1970-01-01T00:00:01.5Z")?.milliseconds == 1500)
        #expect(GoogleDateTime("1970-01-01T00:00:01.123456789Z")?.milliseconds == 1123)
        #expect(GoogleDateTime("2024-02-29T23:59:59.999Z")?.milliseconds == 1_709_251_199_999)
        #expect(GoogleDateTime("2023-02-29T00:00:00Z") == nil)
        #expect(GoogleDateTime("2024-05-01T10:00:00+02:00") == nil)
        #expect(GoogleDateTime("2024-05-01T10:00:00.Z") == nil)
        #expect(GoogleDateTime("2024-05-01T10:00:00.1234567890Z") == nil)
        #expect(GoogleDateTime(milliseconds: 1_714_557_600_123).text == "2024-05-01T10:00:00.123Z")
        #expect(GoogleDateTime(milliseconds: 5).text == "1970-01-01T00:00:00.005Z")
    }

    @Test func productPurchaseDecodesNumbersAndMillis() throws {
        let json = """
            {"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"1714557600123","purchaseState":0,
             "consumptionState":1,"developerPayload":"","orderId":"GPA.3333","purchaseType":0,"acknowledgementState":1,
             "purchaseToken":"tok","productId":"coins_100","quantity":3,"obfuscatedExternalAccountId":"acct",
             "obfuscatedExternalProfileId":"prof","regionCode":"FR","refundableQuantity":2}
            """
        let purchase = try GooglePlayJSON.decode(ProductPurchase.self, from: Data(json.utf8))
        #expect(purchase.purchaseTimeMillis?.milliseconds == 1_714_557_600_123)
        #expect(purchase.purchaseState == .purchased)
        #expect(purchase.consumptionState == .consumed)
        #expect(purchase.purchaseType == .test)
        #expect(purchase.acknowledgementState == .acknowledged)
        #expect(purchase.quantity == 3)
        #expect(purchase.refundableQuantity == 2)
        #expect(purchase.obfuscatedExternalAccountId == "acct")
        let unknown = try GooglePlayJSON.decode(ProductPurchase.self, from: Data(#"{"purchaseState":7}"#.utf8))
        #expect(unknown.purchaseState?.value == nil)
        #expect(unknown.purchaseState?.rawValue == 7)
    }

    @Test func voidedPurchasesPageDecodes() throws {
        let json = """
            {"pageInfo":{"totalResults":3,"resultPerPage":2,"startIndex":0},
             "tokenPagination":{"nextPageToken":"next-1"},
             "voidedPurchases":[
               {"kind":"androidpublisher#voidedPurchase","purchaseToken":"t1","purchaseTimeMillis":"1000",
                "voidedTimeMillis":"2000","orderId":"GPA.1","voidedSource":2,"voidedReason":8},
               {"purchaseToken":"t2","orderId":"GPA.2","voidedSource":0,"voidedReason":1,"voidedQuantity":1}]}
            """
        let page = try GooglePlayJSON.decode(VoidedPurchasesListResponse.self, from: Data(json.utf8))
        #expect(page.tokenPagination?.nextPageToken == "next-1")
        #expect(page.pageInfo?.totalResults == 3)
        let purchases = try #require(page.voidedPurchases)
        #expect(purchases[0].voidedSource == .google)
        #expect(purchases[0].voidedReason == .unacknowledgedPurchase)
        #expect(purchases[0].voidedTimeMillis?.milliseconds == 2000)
        #expect(purchases[1].voidedReason == .remorse)
        #expect(purchases[1].voidedQuantity == 1)
    }

    @Test func googleErrorShapeDecodesAndEncodes() throws {
        let json = """
            {"error":{"code":404,"message":"The purchase token was not found.","status":"NOT_FOUND",
             "errors":[{"message":"The purchase token was not found.","domain":"androidpublisher","reason":"purchaseTokenNotFound","location":"token","locationType":"parameter"}]}}
            """
        let response = try GooglePlayJSON.decode(GoogleErrorResponse.self, from: Data(json.utf8))
        #expect(response.error.code == 404)
        #expect(response.error.status == "NOT_FOUND")
        #expect(response.error.errors?.first?.reason == "purchaseTokenNotFound")
        let oauth = try GooglePlayJSON.decode(
            OAuthErrorResponse.self,
            from: Data(#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#.utf8))
        #expect(oauth == OAuthErrorResponse(error: "invalid_grant", errorDescription: "Invalid JWT Signature."))
        #expect(
            String(
                decoding: GooglePlayJSON.encode(OAuthTokenResponse(accessToken: "a", expiresIn: 3599)), as: UTF8.self)
                == #"{"access_token":"a","expires_in":3599,"token_type":"Bearer"}"#)
    }
}
