import AppStoreModels
import Entitlements
import Foundation
import GooglePlayModels
import StorekeeperIngestion
import Testing

/// Google's wire JSON (as `subscriptionsv2.get`, `products.get`, `voidedpurchases.list` and an
/// RTDN answer it) through `PlayFactMapping` into the engine's facts: every mapped value exact.
@Suite struct PlayFactMappingTests {
    static let readAt = Timestamp(millisecondsSince1970: 1_767_312_000_000)

    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try GooglePlayJSON.decode(T.self, from: Data(json.utf8))
    }

    @Test func subscriptionMapsEveryField() throws {
        let purchase = try Self.decode(
            SubscriptionPurchaseV2.self,
            """
            {"kind":"androidpublisher#subscriptionPurchaseV2","regionCode":"FR",
             "startTime":"2026-01-01T10:00:00.123Z","subscriptionState":"SUBSCRIPTION_STATE_CANCELED",
             "latestOrderId":"ignored","linkedPurchaseToken":"old-token",
             "canceledStateContext":{"userInitiatedCancellation":{"cancelTime":"2026-01-05T08:30:00Z"}},
             "acknowledgementState":"ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED","testPurchase":{},
             "externalAccountIdentifiers":{"obfuscatedExternalAccountId":"acct-7","obfuscatedExternalProfileId":"prof-2",
               "externalAccountId":"ext-9"},
             "lineItems":[{"productId":"monthly","expiryTime":"2026-02-01T10:00:00.123456Z",
               "latestSuccessfulOrderId":"GPA.1234-5678-9012-34567",
               "autoRenewingPlan":{"autoRenewEnabled":false,"recurringPrice":{"currencyCode":"EUR","units":"4","nanos":990000000}},
               "offerDetails":{"basePlanId":"p1m","offerId":"intro"},"offerPhase":{"introductoryPrice":{}}}]}
            """)
        let fact = try PlayFactMapping.subscription(
            purchase, packageName: "com.example.app", purchaseToken: "tok-1", readAt: Self.readAt)
        let expected = PlaySubscriptionFact(
            packageName: "com.example.app", purchaseToken: "tok-1", readAt: Self.readAt,
            state: RawEnum(.canceled), startTime: Timestamp(millisecondsSince1970: 1_767_261_600_123),
            lineItems: [
                PlaySubscriptionLineItem(
                    productId: "monthly", expiryTime: Timestamp(millisecondsSince1970: 1_769_940_000_123),
                    autoRenewEnabled: false, planType: .autoRenewing, basePlanId: "p1m", offerId: "intro",
                    offerPhase: .introductoryPrice, latestSuccessfulOrderId: "GPA.1234-5678-9012-34567",
                    recurringPrice: Entitlements.Money(milliunits: 4990, currency: "EUR"))
            ],
            isAcknowledged: true, linkedPurchaseToken: "old-token", cancelReason: .user,
            canceledAt: Timestamp(millisecondsSince1970: 1_767_601_800_000), isTestPurchase: true,
            obfuscatedAccountId: "acct-7", obfuscatedProfileId: "prof-2", externalAccountId: "ext-9", regionCode: "FR")
        #expect(fact == expected)
        #expect(fact.environment == .sandbox)
    }

    @Test func subscriptionPlansPhasesAndUnknownState() throws {
        let purchase = try Self.decode(
            SubscriptionPurchaseV2.self,
            """
            {"subscriptionState":"SUBSCRIPTION_STATE_FROZEN","startTime":"2026-01-01T00:00:00Z",
             "acknowledgementState":"ACKNOWLEDGEMENT_STATE_PENDING",
             "pausedStateContext":{"autoResumeTime":"2026-03-01T00:00:00Z"},
             "canceledStateContext":{"replacementCancellation":{}},
             "lineItems":[
              {"productId":"prepaid","expiryTime":"2026-02-01T00:00:00Z","prepaidPlan":{},"offerPhase":{"basePrice":{}}},
              {"productId":"installments","autoRenewingPlan":{"autoRenewEnabled":true,"installmentDetails":{}},
               "offerPhase":{"freeTrial":{}}},
              {"productId":"prorated","autoRenewingPlan":{},"offerPhase":{"prorationPeriod":{}}}]}
            """)
        let fact = try PlayFactMapping.subscription(
            purchase, packageName: "com.example.app", purchaseToken: "tok-2", readAt: Self.readAt)
        #expect(fact.state.rawValue == "SUBSCRIPTION_STATE_FROZEN")
        #expect(fact.state.value == nil)
        #expect(fact.isAcknowledged == false)
        #expect(fact.isTestPurchase == false)
        #expect(fact.environment == .production)
        #expect(fact.cancelReason == .replacement)
        #expect(fact.canceledAt == nil)
        #expect(fact.autoResumeTime == Timestamp(millisecondsSince1970: 1_772_323_200_000))
        #expect(
            fact.lineItems == [
                PlaySubscriptionLineItem(
                    productId: "prepaid", expiryTime: Timestamp(millisecondsSince1970: 1_769_904_000_000),
                    autoRenewEnabled: nil, planType: .prepaid, offerPhase: .basePrice, latestSuccessfulOrderId: nil),
                PlaySubscriptionLineItem(
                    productId: "installments", expiryTime: nil, autoRenewEnabled: true, planType: .installment,
                    offerPhase: .freeTrial, latestSuccessfulOrderId: nil),
                PlaySubscriptionLineItem(
                    productId: "prorated", expiryTime: nil, autoRenewEnabled: false, planType: .autoRenewing,
                    offerPhase: .prorationPeriod, latestSuccessfulOrderId: nil),
            ])
    }

    /// Issue 15: Play prices (units + nanos) become milliunits exactly, in integers; a price
    /// finer than a milliunit rounds half away from zero; nanos of the other sign than units,
    /// or of 10^9 and more, are refused.
    @Test func pricesConvertExactlyToMilliunits() throws {
        func price(_ units: String, _ nanos: Int) throws -> Entitlements.Money? {
            let purchase = try Self.decode(
                SubscriptionPurchaseV2.self,
                #"{"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[{"productId":"m","autoRenewingPlan":{"recurringPrice":{"currencyCode":"USD","units":"\#(units)","nanos":\#(nanos)}}}]}"#
            )
            return try PlayFactMapping.subscription(purchase, packageName: "p", purchaseToken: "t", readAt: Self.readAt)
                .lineItems[0].recurringPrice
        }
        #expect(try price("9", 990_000_000) == Entitlements.Money(milliunits: 9990, currency: "USD"))
        #expect(try price("0", 999_000) == Entitlements.Money(milliunits: 1, currency: "USD"))
        #expect(try price("1999", 1_000_000) == Entitlements.Money(milliunits: 1_999_001, currency: "USD"))
        #expect(try price("0", 500_000) == Entitlements.Money(milliunits: 1, currency: "USD"))
        #expect(try price("0", 499_999) == Entitlements.Money(milliunits: 0, currency: "USD"))
        #expect(try price("-1", -500_000) == Entitlements.Money(milliunits: -1001, currency: "USD"))
        #expect(
            try price("9223372036854775", 807_000_000)
                == Entitlements.Money(milliunits: 9_223_372_036_854_775_807, currency: "USD"))
        #expect(throws: IngestionError(.invalidTransaction, "A Google Play price is too large.")) {
            try price("92233720368547759", 0)
        }
        for (units, nanos) in [("1", -1), ("0", 1_000_000_000), ("x", 0)] {
            #expect(
                throws: IngestionError(
                    .invalidTransaction, "A Google Play price has no currency or an unreadable amount.")
            ) { try price(units, nanos) }
        }
    }

    @Test func subscriptionRefusesMissingStateAndProduct() throws {
        let noState = try Self.decode(SubscriptionPurchaseV2.self, #"{"lineItems":[{"productId":"m"}]}"#)
        #expect(throws: IngestionError(.invalidTransaction, "The Google Play subscription has no subscriptionState.")) {
            try PlayFactMapping.subscription(noState, packageName: "p", purchaseToken: "t", readAt: Self.readAt)
        }
        let noProduct = try Self.decode(
            SubscriptionPurchaseV2.self, #"{"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[{}]}"#)
        #expect(
            throws: IngestionError(
                .invalidTransaction, "The Google Play subscription's lineItems[0] has no productId.")
        ) {
            try PlayFactMapping.subscription(noProduct, packageName: "p", purchaseToken: "t", readAt: Self.readAt)
        }
        let badPrice = try Self.decode(
            SubscriptionPurchaseV2.self,
            #"{"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[{"productId":"m","autoRenewingPlan":{"recurringPrice":{"units":"x","currencyCode":"USD"}}}]}"#
        )
        #expect(
            throws: IngestionError(
                .invalidTransaction, "A Google Play price has no currency or an unreadable amount.")
        ) {
            try PlayFactMapping.subscription(badPrice, packageName: "p", purchaseToken: "t", readAt: Self.readAt)
        }
    }

    @Test func productMapsEveryField() throws {
        let purchase = try Self.decode(
            ProductPurchase.self,
            """
            {"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"1767261600123","purchaseState":0,
             "consumptionState":1,"orderId":"GPA.3333-4444-5555-66666","purchaseType":0,"acknowledgementState":1,
             "quantity":3,"obfuscatedExternalAccountId":"acct-7","obfuscatedExternalProfileId":"prof-2",
             "regionCode":"US"}
            """)
        let fact = try PlayFactMapping.product(
            purchase, packageName: "com.example.app", productId: "coins", purchaseToken: "tok-3", readAt: Self.readAt)
        #expect(
            fact
                == PlayProductPurchaseFact(
                    packageName: "com.example.app", purchaseToken: "tok-3", productId: "coins",
                    orderId: "GPA.3333-4444-5555-66666", readAt: Self.readAt,
                    purchaseTime: Timestamp(millisecondsSince1970: 1_767_261_600_123),
                    purchaseState: RawEnum(.purchased),
                    isConsumed: true, isAcknowledged: true, quantity: 3, purchaseType: 0, obfuscatedAccountId: "acct-7",
                    obfuscatedProfileId: "prof-2", regionCode: "US"))
        #expect(fact.environment == .sandbox)

        let plain = try Self.decode(
            ProductPurchase.self, #"{"purchaseTimeMillis":"1000","purchaseState":7,"acknowledgementState":0}"#)
        let mapped = try PlayFactMapping.product(
            plain, packageName: "p", productId: "lifetime", purchaseToken: "t", readAt: Self.readAt)
        #expect(mapped.purchaseState.rawValue == 7)
        #expect(mapped.purchaseState.value == nil)
        #expect(mapped.quantity == 1)
        #expect(mapped.purchaseType == nil)
        #expect(mapped.orderId == nil)
        #expect(mapped.isConsumed == false)
        #expect(mapped.isAcknowledged == false)
        #expect(mapped.environment == .production)
    }

    @Test func productRefusesMissingFields() throws {
        let noTime = try Self.decode(ProductPurchase.self, #"{"purchaseState":0}"#)
        #expect(
            throws: IngestionError(.invalidTransaction, "The Google Play product purchase has no purchaseTimeMillis.")
        ) {
            try PlayFactMapping.product(
                noTime, packageName: "p", productId: "x", purchaseToken: "t", readAt: Self.readAt)
        }
        let zero = try Self.decode(
            ProductPurchase.self, #"{"purchaseTimeMillis":"1","purchaseState":0,"quantity":0}"#)
        #expect(
            throws: IngestionError(.invalidTransaction, "The Google Play product purchase has a quantity below 1.")
        ) {
            try PlayFactMapping.product(zero, packageName: "p", productId: "x", purchaseToken: "t", readAt: Self.readAt)
        }
    }

    @Test func voidedListEntriesAreFullOrQuantityPartial() throws {
        let full = try Self.decode(
            VoidedPurchase.self,
            """
            {"kind":"androidpublisher#voidedPurchase","purchaseToken":"tok-4","purchaseTimeMillis":"1000",
             "voidedTimeMillis":"1767312000000","orderId":"GPA.1-2-3","voidedSource":2,"voidedReason":3}
            """)
        #expect(
            try PlayFactMapping.voided(full, packageName: "com.example.app", productType: .subscription)
                == PlayVoidedPurchaseFact(
                    packageName: "com.example.app", purchaseToken: "tok-4", orderId: "GPA.1-2-3",
                    productType: .subscription, voidedAt: Self.readAt, voidedSource: 2, voidedReason: 3,
                    refundType: .full))
        let partial = try Self.decode(
            VoidedPurchase.self,
            #"{"purchaseToken":"tok-5","voidedTimeMillis":"5","voidedSource":0,"voidedReason":9,"voidedQuantity":2}"#)
        #expect(
            try PlayFactMapping.voided(partial, packageName: "p", productType: .oneTime, isTestPurchase: true)
                == PlayVoidedPurchaseFact(
                    packageName: "p", purchaseToken: "tok-5", orderId: nil, productType: .oneTime,
                    voidedAt: Timestamp(millisecondsSince1970: 5), voidedSource: 0, voidedReason: 9,
                    refundType: .quantityBasedPartial, voidedQuantity: 2, isTestPurchase: true))
        let noTime = try Self.decode(VoidedPurchase.self, #"{"purchaseToken":"tok-6"}"#)
        #expect(throws: IngestionError(.invalidTransaction, "The voided purchase has no voidedTimeMillis.")) {
            try PlayFactMapping.voided(noTime, packageName: "p", productType: .oneTime)
        }
        let noToken = try Self.decode(VoidedPurchase.self, #"{"voidedTimeMillis":"5"}"#)
        #expect(throws: IngestionError(.invalidTransaction, "The voided purchase has no purchaseToken.")) {
            try PlayFactMapping.voided(noToken, packageName: "p", productType: .oneTime)
        }
    }

    @Test func voidedNotificationAndRevocation() throws {
        let notification = try DeveloperNotification.decode(
            Data(
                """
                {"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1767312000000",
                 "voidedPurchaseNotification":{"purchaseToken":"tok-7","orderId":"GPA.9","productType":2,"refundType":2}}
                """.utf8))
        let voided = try #require(notification.voidedPurchaseNotification)
        #expect(
            try PlayFactMapping.voided(voided, packageName: "com.example.app", eventTime: notification.eventTimeMillis)
                == PlayVoidedPurchaseFact(
                    packageName: "com.example.app", purchaseToken: "tok-7", orderId: "GPA.9", productType: .oneTime,
                    voidedAt: Self.readAt, voidedSource: nil, voidedReason: nil, refundType: .quantityBasedPartial))
        var unknown = voided
        unknown.refundType = PlayRawEnum(rawValue: 5)
        #expect(
            throws: IngestionError(
                .invalidNotification, "The voided purchase notification has an unknown refundType 5.")
        ) {
            try PlayFactMapping.voided(unknown, packageName: "p", eventTime: notification.eventTimeMillis)
        }
        let revoked = SubscriptionNotification(
            version: "1.0", notificationType: PlayRawEnum(.revoked), purchaseToken: "tok-8", subscriptionId: "monthly")
        #expect(
            PlayFactMapping.revocation(
                revoked, packageName: "p", eventTime: EpochMillisString(milliseconds: 42), orderId: "GPA.8",
                isTestPurchase: true)
                == PlayVoidedPurchaseFact(
                    packageName: "p", purchaseToken: "tok-8", orderId: "GPA.8", productType: .subscription,
                    voidedAt: Timestamp(millisecondsSince1970: 42), voidedSource: nil, voidedReason: nil,
                    refundType: .full, isTestPurchase: true))
    }
}
