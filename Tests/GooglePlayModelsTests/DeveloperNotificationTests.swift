import Foundation
import Testing

@testable import GooglePlayModels

struct DeveloperNotificationTests {
    /// A push body as Pub/Sub sends it, around a subscription notification as Google documents it.
    static func push(data: String, messageId: String = "136969346945") -> Data {
        Data(
            """
            {"message": {"attributes": {"key": "value"}, "data": "\(data)", "messageId": "\(messageId)",
              "publishTime": "2024-05-01T10:00:00.123456789Z"},
             "subscription": "projects/myproject/subscriptions/mysubscription"}
            """.utf8)
    }

    static func base64(_ json: String) -> String { Data(json.utf8).base64EncodedString() }

    @Test func subscriptionNotificationDecodesFromPushEnvelope() throws {
        let inner = """
            {"version":"1.0","packageName":"com.some.app","eventTimeMillis":"1503349566168",
             "subscriptionNotification":{"version":"1.0","notificationType":4,
               "purchaseToken":"PURCHASE_TOKEN","subscriptionId":"monthly001"}}
            """
        let push = try PubSubPushRequest.decode(Self.push(data: Self.base64(inner)))
        #expect(push.message.messageId == "136969346945")
        #expect(push.message.publishTime == "2024-05-01T10:00:00.123456789Z")
        #expect(push.message.attributes == ["key": "value"])
        #expect(push.subscription == "projects/myproject/subscriptions/mysubscription")
        let notification = try push.developerNotification()
        #expect(notification.version == "1.0")
        #expect(notification.packageName == "com.some.app")
        #expect(notification.eventTimeMillis == EpochMillisString(milliseconds: 1_503_349_566_168))
        #expect(notification.eventTimeMillis.date == Date(timeIntervalSince1970: 1_503_349_566.168))
        let subscription = try #require(notification.subscriptionNotification)
        #expect(subscription.notificationType == .purchased)
        #expect(subscription.notificationType.rawValue == 4)
        #expect(subscription.purchaseToken == "PURCHASE_TOKEN")
        #expect(subscription.subscriptionId == "monthly001")
        #expect(notification.kind == .subscription(subscription))
    }

    @Test func everyDocumentedSubscriptionTypeHasItsNumber() {
        let expected: [(SubscriptionNotificationType, Int)] = [
            (.recovered, 1), (.renewed, 2), (.canceled, 3), (.purchased, 4), (.onHold, 5), (.inGracePeriod, 6),
            (.restarted, 7), (.priceChangeConfirmed, 8), (.deferred, 9), (.paused, 10), (.pauseScheduleChanged, 11),
            (.revoked, 12), (.expired, 13), (.itemsChanged, 17), (.cancellationScheduled, 18),
            (.priceChangeUpdated, 19), (.pendingPurchaseCanceled, 20), (.priceStepUpConsentUpdated, 22),
        ]
        #expect(SubscriptionNotificationType.allCases.count == expected.count)
        for (type, number) in expected { #expect(type.rawValue == number) }
        #expect(OneTimeProductNotificationType.purchased.rawValue == 1)
        #expect(OneTimeProductNotificationType.canceled.rawValue == 2)
        #expect(VoidedPurchaseProductType.subscription.rawValue == 1)
        #expect(VoidedPurchaseProductType.oneTime.rawValue == 2)
        #expect(VoidedPurchaseRefundType.fullRefund.rawValue == 1)
        #expect(VoidedPurchaseRefundType.quantityBasedPartialRefund.rawValue == 2)
    }

    @Test func unknownNotificationTypeKeepsItsNumberAndReencodes() throws {
        let json = """
            {"version":"1.0","packageName":"com.some.app","eventTimeMillis":"1",
             "subscriptionNotification":{"version":"1.0","notificationType":99,"purchaseToken":"t"}}
            """
        let notification = try DeveloperNotification.decode(Data(json.utf8))
        let type = try #require(notification.subscriptionNotification?.notificationType)
        #expect(type.value == nil)
        #expect(type.rawValue == 99)
        let reencoded = String(decoding: GooglePlayJSON.encode(notification), as: UTF8.self)
        #expect(
            reencoded
                == #"{"eventTimeMillis":"1","packageName":"com.some.app","subscriptionNotification":{"notificationType":99,"purchaseToken":"t","version":"1.0"},"version":"1.0"}"#
        )
    }

    @Test func oneTimeVoidedAndTestNotificationsDecode() throws {
        let oneTime = try DeveloperNotification.decode(
            Data(
                #"{"version":"1.0","packageName":"p","eventTimeMillis":"2","oneTimeProductNotification":{"version":"1.0","notificationType":2,"purchaseToken":"t1","sku":"coins_100"}}"#
                    .utf8))
        #expect(oneTime.oneTimeProductNotification?.notificationType == .canceled)
        #expect(oneTime.oneTimeProductNotification?.sku == "coins_100")

        let voided = try DeveloperNotification.decode(
            Data(
                #"{"version":"1.0","packageName":"p","eventTimeMillis":"3","voidedPurchaseNotification":{"purchaseToken":"t2","orderId":"GS.0000-0000-0000","productType":2,"refundType":2}}"#
                    .utf8))
        let void = try #require(voided.voidedPurchaseNotification)
        #expect(void.productType == .oneTime)
        #expect(void.refundType == .quantityBasedPartialRefund)
        #expect(void.orderId == "GS.0000-0000-0000")

        let test = try DeveloperNotification.decode(
            Data(
                #"{"version":"1.0","packageName":"p","eventTimeMillis":"4","testNotification":{"version":"1.0"}}"#.utf8)
        )
        #expect(test.kind == .test(TestNotification(version: "1.0")))
    }

    @Test func notificationWithNoneOrTwoKindsIsRefused() {
        #expect(
            throws: GooglePlayModelError(
                .notificationKind, type: "DeveloperNotification", detail: "0 notification members present")
        ) {
            try DeveloperNotification.decode(Data(#"{"version":"1.0","packageName":"p","eventTimeMillis":"4"}"#.utf8))
        }
        #expect(
            throws: GooglePlayModelError(
                .notificationKind, type: "DeveloperNotification", detail: "2 notification members present")
        ) {
            try DeveloperNotification.decode(
                Data(
                    #"{"version":"1.0","packageName":"p","eventTimeMillis":"4","testNotification":{"version":"1.0"},"oneTimeProductNotification":{"version":"1.0","notificationType":1,"purchaseToken":"t","sku":"s"}}"#
                        .utf8))
        }
    }

    @Test func badInputGetsNamedErrors() {
        #expect(throws: GooglePlayModelError(.invalidValue, path: "eventTimeMillis", type: "DeveloperNotification")) {
            try DeveloperNotification.decode(
                Data(#"{"version":"1.0","packageName":"p","eventTimeMillis":"12x","testNotification":{}}"#.utf8))
        }
        #expect(throws: GooglePlayModelError(.wrongType, path: "eventTimeMillis", type: "DeveloperNotification")) {
            try DeveloperNotification.decode(
                Data(#"{"version":"1.0","packageName":"p","eventTimeMillis":12,"testNotification":{}}"#.utf8))
        }
        #expect(throws: GooglePlayModelError(.missingField, path: "packageName", type: "DeveloperNotification")) {
            try DeveloperNotification.decode(Data(#"{"version":"1.0","eventTimeMillis":"1"}"#.utf8))
        }
        #expect(throws: GooglePlayModelError(.dataNotBase64, path: "message.data", type: "PubSubPushRequest")) {
            try PubSubPushRequest.decode(Self.push(data: "not base64!")).developerNotification()
        }
        #expect(throws: GooglePlayModelError(.notJSON, type: "PubSubPushRequest")) {
            try PubSubPushRequest.decode(Data("[1]".utf8))
        }
        #expect(throws: GooglePlayModelError(.missingField, path: "message.messageId", type: "PubSubPushRequest")) {
            try PubSubPushRequest.decode(Data(#"{"message":{"data":""}}"#.utf8))
        }
    }

    @Test func oversizedPushIsRefusedBeforeParsing() {
        let body = Data(repeating: UInt8(ascii: " "), count: PubSubPushRequest.maximumBytes + 1)
        #expect(
            throws: GooglePlayModelError(
                .tooLarge, type: "PubSubPushRequest", detail: "65537 bytes, at most 65536 accepted")
        ) {
            try PubSubPushRequest.decode(body)
        }
        let inner = Data(repeating: UInt8(ascii: " "), count: DeveloperNotification.maximumBytes + 1)
        let push = PubSubPushRequest(message: PubSubMessage(bytes: inner, messageId: "1"))
        #expect(throws: GooglePlayModelError.self) { try push.developerNotification() }
    }

    @Test func pushEnvelopeRoundTripsThroughItsBuilder() throws {
        let notification = DeveloperNotification(
            packageName: "com.some.app", eventTimeMillis: EpochMillisString(milliseconds: 1_700_000_000_000),
            subscriptionNotification: SubscriptionNotification(
                notificationType: PlayRawEnum(.renewed), purchaseToken: "tok"))
        let push = PubSubPushRequest(
            message: PubSubMessage(bytes: GooglePlayJSON.encode(notification), messageId: "42"),
            subscription: "projects/p/subscriptions/s")
        let decoded = try PubSubPushRequest.decode(GooglePlayJSON.encode(push))
        #expect(decoded == push)
        #expect(try decoded.developerNotification() == notification)
    }
}
