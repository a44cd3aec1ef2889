import AppStoreModels
import Foundation
import Testing

/// Every Apple enumeration: the typed case, its raw wire value, a JSON round trip through
/// `RawEnum`, and a value Apple has not invented yet.
struct EnumTests {
    /// `{"v": <raw>}` → typed case, raw value, re-encodes byte-identical.
    func check<K: RawRepresentable & Sendable & Hashable>(
        _ known: K, json raw: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws where K.RawValue: Codable & Sendable & Hashable {
        let data = #"{"v":\#(raw)}"#.utf8Data
        let box = try AppStoreJSON.decode(Box<K>.self, from: data)
        #expect(box.v.value == known, sourceLocation: sourceLocation)
        #expect(box.v.rawValue == known.rawValue, sourceLocation: sourceLocation)
        #expect(AppStoreJSON.encode(box) == data, sourceLocation: sourceLocation)
        #expect(try reencoded(box) == box, sourceLocation: sourceLocation)
    }

    /// An unknown value decodes with `value == nil`, keeps its raw value and re-encodes unchanged.
    func checkUnknown<K: RawRepresentable & Sendable & Hashable>(
        _ type: K.Type, json raw: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws where K.RawValue: Codable & Sendable & Hashable {
        let data = #"{"v":\#(raw)}"#.utf8Data
        let box = try AppStoreJSON.decode(Box<K>.self, from: data)
        #expect(box.v.value == nil, sourceLocation: sourceLocation)
        #expect(AppStoreJSON.encode(box) == data, sourceLocation: sourceLocation)
    }

    /// Every case of a string enum, plus an unknown string.
    func checkAll<K: RawRepresentable & CaseIterable & Sendable & Hashable>(
        _ type: K.Type, expectedCount: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws where K.RawValue == String {
        #expect(K.allCases.count == expectedCount, sourceLocation: sourceLocation)
        for known in K.allCases {
            try check(known, json: "\"\(known.rawValue)\"", sourceLocation: sourceLocation)
        }
        try checkUnknown(
            K.self, json: #""SOMETHING_APPLE_ADDS_IN_2031""#, sourceLocation: sourceLocation)
    }

    /// Every case of an integer enum, plus an unknown integer.
    func checkAll<K: RawRepresentable & CaseIterable & Sendable & Hashable>(
        _ type: K.Type, expectedCount: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws where K.RawValue == Int32 {
        #expect(K.allCases.count == expectedCount, sourceLocation: sourceLocation)
        for known in K.allCases {
            try check(known, json: "\(known.rawValue)", sourceLocation: sourceLocation)
        }
        try checkUnknown(K.self, json: "977", sourceLocation: sourceLocation)
    }

    @Test func existingV2Enums() throws {
        try checkAll(AppStoreEnvironment.self, expectedCount: 4)
        try checkAll(ProductType.self, expectedCount: 4)
        try checkAll(InAppOwnershipType.self, expectedCount: 3)
        try checkAll(TransactionReason.self, expectedCount: 2)
        try checkAll(OfferType.self, expectedCount: 4)
        try checkAll(OfferDiscountType.self, expectedCount: 4)
        try checkAll(RevocationReason.self, expectedCount: 2)
        try checkAll(RevocationType.self, expectedCount: 3)
        try checkAll(ExpirationIntent.self, expectedCount: 5)
        try checkAll(AutoRenewStatus.self, expectedCount: 2)
        try checkAll(PriceIncreaseStatus.self, expectedCount: 2)
        try checkAll(Status.self, expectedCount: 5)
        try checkAll(NotificationTypeV2.self, expectedCount: 23)
        try checkAll(Subtype.self, expectedCount: 17)
        try checkAll(ConsumptionRequestReason.self, expectedCount: 5)
        try checkAll(PurchasePlatform.self, expectedCount: 4)
    }

    @Test func serverAPIEnums() throws {
        try checkAll(OrderLookupStatus.self, expectedCount: 2)
        try checkAll(SendAttemptResult.self, expectedCount: 11)
        try checkAll(ExtendReasonCode.self, expectedCount: 4)
        try checkAll(AccountTenure.self, expectedCount: 8)
        try checkAll(ConsumptionStatus.self, expectedCount: 4)
        try checkAll(DeliveryStatusV1.self, expectedCount: 6)
        try checkAll(DeliveryStatus.self, expectedCount: 5)
        try checkAll(LifetimeDollarsPurchased.self, expectedCount: 8)
        try checkAll(LifetimeDollarsRefunded.self, expectedCount: 8)
        try checkAll(Platform.self, expectedCount: 3)
        try checkAll(PlayTime.self, expectedCount: 8)
        try checkAll(RefundPreferenceV1.self, expectedCount: 4)
        try checkAll(RefundPreference.self, expectedCount: 3)
        try checkAll(UserStatus.self, expectedCount: 5)
        try checkAll(TransactionHistoryRequest.Order.self, expectedCount: 2)
        try checkAll(TransactionHistoryRequest.ProductType.self, expectedCount: 4)
    }

    @Test func retentionMessagingEnums() throws {
        try checkAll(ImageState.self, expectedCount: 3)
        try checkAll(ImageSize.self, expectedCount: 2)
        try checkAll(MessageState.self, expectedCount: 3)
        try checkAll(HeaderPosition.self, expectedCount: 2)
        try checkAll(PerformanceTestStatus.self, expectedCount: 3)
    }

    @Test func legacyEnums() throws {
        try checkAll(NotificationTypeV1.self, expectedCount: 13)
        try checkAll(NotificationEnvironmentV1.self, expectedCount: 2)
        #expect(NotificationEnvironmentV1.production.rawValue == "PROD")
        #expect(NotificationEnvironmentV1.production.appStoreEnvironment == .production)
        #expect(NotificationEnvironmentV1.sandbox.appStoreEnvironment == .sandbox)
    }

    @Test func apiErrorEveryCase() throws {
        for known in APIError.allCases { try check(known, json: "\(known.rawValue)") }
        try checkUnknown(APIError.self, json: "4049999")
    }

    @Test func spotChecksAgainstApplesDocumentation() {
        #expect(Subtype.productNotForSale.rawValue == "PRODUCT_NOT_FOR_SALE")
        #expect(NotificationTypeV2.refundReversed.rawValue == "REFUND_REVERSED")
        #expect(OfferType.winBackOffer.rawValue == 4)
        #expect(ExtendReasonCode.serviceIssueOrOutage.rawValue == 3)
        #expect(
            SendAttemptResult.unsuccessfulHttpResponseCode.rawValue == "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
        #expect(DeliveryStatusV1.didNotDeliverForOtherReason.rawValue == 5)
        #expect(InAppOwnershipType.assigned.rawValue == "ASSIGNED")
    }
}

/// A JSON object with one enum field, to exercise `RawEnum` the way models use it.
struct Box<K: RawRepresentable & Sendable & Hashable>: Codable, Hashable
where K.RawValue: Codable & Sendable & Hashable {
    var v: RawEnum<K>
}
