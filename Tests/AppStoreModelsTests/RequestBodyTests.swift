import AppStoreModels
import Foundation
import Testing

/// Request bodies go out exactly as Apple's endpoints and Apple's client tests expect.
struct RequestBodyTests {
    func json<T: Encodable>(_ value: T) throws -> JSONValue {
        try AppStoreJSON.decode(JSONValue.self, from: AppStoreJSON.encode(value)).normalized
    }

    @Test func extendRenewalDate() throws {
        let body = ExtendRenewalDateRequest(
            extendByDays: 45, extendReasonCode: RawEnum(.customerSatisfaction),
            requestIdentifier: "fdf964a4-233b-486c-aac1-97d8d52688ac")
        #expect(
            try json(body)
                == .object([
                    "extendByDays": .integer(45), "extendReasonCode": .integer(1),
                    "requestIdentifier": .string("fdf964a4-233b-486c-aac1-97d8d52688ac"),
                ]))
        #expect(try reencoded(body) == body)
    }

    @Test func performanceTestRequestNamesTheOriginalTransaction() throws {
        // Apple's Retention Messaging docs: `{"originalTransactionId": …}`, not `transactionId`.
        let body = PerformanceTestRequest(originalTransactionId: "2000000000000001")
        #expect(try json(body) == .object(["originalTransactionId": .string("2000000000000001")]))
        #expect(
            String(decoding: AppStoreJSON.encode(body), as: UTF8.self)
                == #"{"originalTransactionId":"2000000000000001"}"#)
    }

    @Test func massExtendRenewalDate() throws {
        let body = MassExtendRenewalDateRequest(
            extendByDays: 45, extendReasonCode: RawEnum(.customerSatisfaction),
            requestIdentifier: "fdf964a4-233b-486c-aac1-97d8d52688ac",
            storefrontCountryCodes: ["USA", "MEX"],
            productId: "com.example.productId")
        #expect(
            try json(body)
                == .object([
                    "extendByDays": .integer(45), "extendReasonCode": .integer(1),
                    "requestIdentifier": .string("fdf964a4-233b-486c-aac1-97d8d52688ac"),
                    "storefrontCountryCodes": .array([.string("USA"), .string("MEX")]),
                    "productId": .string("com.example.productId"),
                ]))
    }

    @Test func notificationHistoryRequestUsesWholeMilliseconds() throws {
        // Apple's test sends dates with sub-millisecond parts; they must leave as integers.
        let start = try AppStoreJSON.decode(Timestamp.self, from: "1698148900000.9".utf8Data)
        let body = NotificationHistoryRequest(
            startDate: start, endDate: Timestamp(millisecondsSince1970: 1_698_148_950_000),
            notificationType: RawEnum(.subscribed), notificationSubtype: RawEnum(.initialBuy),
            transactionId: "999733843",
            onlyFailures: true)
        #expect(
            try json(body)
                == .object([
                    "startDate": .integer(1_698_148_900_000), "endDate": .integer(1_698_148_950_000),
                    "notificationType": .string("SUBSCRIBED"), "notificationSubtype": .string("INITIAL_BUY"),
                    "transactionId": .string("999733843"), "onlyFailures": .bool(true),
                ]))
        #expect(try reencoded(body) == body)
    }

    @Test func consumptionRequestV2() throws {
        let body = ConsumptionRequest(
            customerConsented: true, consumptionPercentage: 50_000, deliveryStatus: RawEnum(.delivered),
            refundPreference: RawEnum(.grantProrated), sampleContentProvided: false)
        #expect(
            try json(body)
                == .object([
                    "customerConsented": .bool(true), "consumptionPercentage": .integer(50_000),
                    "deliveryStatus": .string("DELIVERED"), "refundPreference": .string("GRANT_PRORATED"),
                    "sampleContentProvided": .bool(false),
                ]))
        #expect(try reencoded(body) == body)
    }

    @Test func consumptionRequestV1() throws {
        let token = UUID(uuidString: "7389a31a-fb6d-4569-a2a6-db7d85d84813")!
        let body = ConsumptionRequestV1(
            customerConsented: true, consumptionStatus: RawEnum(.notConsumed),
            platform: RawEnum(.nonApple),
            sampleContentProvided: false, deliveryStatus: RawEnum(.didNotDeliverDueToServerOutage),
            appAccountToken: token,
            accountTenure: RawEnum(.thirtyDaysToNinetyDays), playTime: RawEnum(.oneDayToFourDays),
            lifetimeDollarsRefunded: RawEnum(
                .oneThousandDollarsToOneThousandNineHundredNinetyNineDollarsAndNinetyNineCents),
            lifetimeDollarsPurchased: RawEnum(.twoThousandDollarsOrGreater),
            userStatus: RawEnum(.limitedAccess),
            refundPreference: RawEnum(.noPreference))
        // The values Apple's client test sends for this body.
        #expect(
            try json(body)
                == .object([
                    "customerConsented": .bool(true), "consumptionStatus": .integer(1),
                    "platform": .integer(2),
                    "sampleContentProvided": .bool(false), "deliveryStatus": .integer(3),
                    "appAccountToken": .string("7389a31a-fb6d-4569-a2a6-db7d85d84813"),
                    "accountTenure": .integer(4),
                    "playTime": .integer(5), "lifetimeDollarsRefunded": .integer(6),
                    "lifetimeDollarsPurchased": .integer(7),
                    "userStatus": .integer(4), "refundPreference": .integer(3),
                ]))
        #expect(try reencoded(body) == body)
    }

    @Test func updateAppAccountToken() throws {
        let token = UUID(uuidString: "7389a31a-fb6d-4569-a2a6-db7d85d84813")!
        let body = UpdateAppAccountTokenRequest(appAccountToken: token)
        #expect(
            try json(body)
                == .object(["appAccountToken": .string("7389a31a-fb6d-4569-a2a6-db7d85d84813")]))
        #expect(try reencoded(body) == body)
    }

    @Test func transactionHistoryQueryMatchesApplesClientTest() {
        let request = TransactionHistoryRequest(
            startDate: Timestamp(millisecondsSince1970: 123_455),
            endDate: Timestamp(millisecondsSince1970: 123_456),
            productIds: ["com.example.1", "com.example.2"], productTypes: [.consumable, .autoRenewable],
            sort: .ascending,
            subscriptionGroupIdentifiers: ["sub_group_id", "sub_group_id_2"],
            inAppOwnershipType: .familyShared, revoked: false)
        let items = request.queryItems(revision: "revision_input").map { "\($0.name)=\($0.value)" }
        #expect(
            items == [
                "revision=revision_input", "startDate=123455", "endDate=123456", "productId=com.example.1",
                "productId=com.example.2", "productType=CONSUMABLE", "productType=AUTO_RENEWABLE",
                "sort=ASCENDING",
                "subscriptionGroupIdentifier=sub_group_id", "subscriptionGroupIdentifier=sub_group_id_2",
                "inAppOwnershipType=FAMILY_SHARED", "revoked=false",
            ])
        #expect(TransactionHistoryRequest().queryItems().isEmpty)
    }
}
