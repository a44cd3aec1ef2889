import Foundation
import Testing

@testable import GooglePlayModels

struct OrderTests {
    /// An Order with every member the discovery document lists (schema `Order`).
    static let orderJSON = """
        {
          "orderId": "GPA.3372-1234-5678-90123..2",
          "purchaseToken": "TOKEN-1",
          "state": "PARTIALLY_REFUNDED",
          "salesChannel": "IN_APP",
          "createTime": "2024-05-01T10:00:00.123Z",
          "lastEventTime": "2024-05-03T08:00:00Z",
          "buyerAddress": {"buyerCountry": "DE", "buyerState": "BE", "buyerPostcode": "10115"},
          "total": {"currencyCode": "EUR", "units": "11", "nanos": 890000000},
          "tax": {"currencyCode": "EUR", "units": "1", "nanos": 900000000},
          "developerRevenueInBuyerCurrency": {"currencyCode": "EUR", "units": "8", "nanos": 491500000},
          "orderDetails": {"taxInclusive": true},
          "pointsDetails": {"pointsOfferId": "offer-1", "pointsSpent": "120", "pointsDiscountRateMicros": "250000",
                            "pointsCouponValue": {"currencyCode": "EUR", "units": "1"}},
          "orderHistory": {
            "processedEvent": {"eventTime": "2024-05-01T10:00:01Z"},
            "cancellationEvent": {"eventTime": "2024-05-02T10:00:00Z"},
            "refundEvent": {"eventTime": "2024-05-03T08:00:00Z", "refundReason": "CHARGEBACK",
                            "refundDetails": {"total": {"currencyCode": "EUR", "units": "11", "nanos": 890000000},
                                              "tax": {"currencyCode": "EUR", "units": "1", "nanos": 900000000}}},
            "partialRefundEvents": [
              {"createTime": "2024-05-02T09:00:00Z", "processTime": "2024-05-02T09:30:00Z",
               "state": "PROCESSED_SUCCESSFULLY",
               "refundDetails": {"total": {"currencyCode": "EUR", "units": "2"}}}
            ]
          },
          "lineItems": [
            {"productId": "premium_monthly", "productTitle": "Premium",
             "listingPrice": {"currencyCode": "EUR", "units": "9", "nanos": 990000000},
             "total": {"currencyCode": "EUR", "units": "11", "nanos": 890000000},
             "tax": {"currencyCode": "EUR", "units": "1", "nanos": 900000000},
             "subscriptionDetails": {"basePlanId": "monthly", "offerId": "intro", "offerPhase": "INTRODUCTORY",
               "offerPhaseDetails": {"prorationPeriodDetails": {"originalOfferPhase": "FREE_TRIAL"}},
               "servicePeriodStartTime": "2024-05-01T10:00:00Z", "servicePeriodEndTime": "2024-06-01T10:00:00Z"}},
            {"productId": "coins", "oneTimePurchaseDetails": {"offerId": "o", "purchaseOptionId": "buy",
               "quantity": 3, "preorderDetails": {}, "rentalDetails": {}}},
            {"productId": "app", "paidAppDetails": {}}
          ]
        }
        """

    @Test func orderDecodesEveryMember() throws {
        let order = try GooglePlayJSON.decode(Order.self, from: Data(Self.orderJSON.utf8))
        #expect(order.orderId == "GPA.3372-1234-5678-90123..2")
        #expect(order.purchaseToken == "TOKEN-1")
        #expect(order.state == .partiallyRefunded)
        #expect(order.state?.rawValue == "PARTIALLY_REFUNDED")
        #expect(order.salesChannel == .inApp)
        #expect(order.createTime?.milliseconds == 1_714_557_600_123)
        #expect(order.lastEventTime?.milliseconds == 1_714_723_200_000)
        #expect(order.buyerAddress == BuyerAddress(buyerCountry: "DE", buyerState: "BE", buyerPostcode: "10115"))
        #expect(order.total == Money(currencyCode: "EUR", units: "11", nanos: 890_000_000))
        #expect(order.total?.micros == 11_890_000)
        #expect(order.tax?.micros == 1_900_000)
        #expect(order.developerRevenueInBuyerCurrency?.currencyCode == "EUR")
        #expect(order.developerRevenueInBuyerCurrency?.micros == 8_491_500)
        #expect(order.orderDetails?.taxInclusive == true)
        #expect(order.pointsDetails?.pointsSpent == "120")
        #expect(order.pointsDetails?.pointsDiscountRateMicros == "250000")
        #expect(order.pointsDetails?.pointsCouponValue?.micros == 1_000_000)
        let history = try #require(order.orderHistory)
        #expect(history.processedEvent?.eventTime?.milliseconds == 1_714_557_601_000)
        #expect(history.cancellationEvent?.eventTime?.milliseconds == 1_714_644_000_000)
        #expect(history.refundEvent?.refundReason == .chargeback)
        #expect(history.refundEvent?.refundDetails?.total?.micros == 11_890_000)
        #expect(history.partialRefundEvents?.count == 1)
        #expect(history.partialRefundEvents?[0].state == .processedSuccessfully)
        #expect(history.partialRefundEvents?[0].processTime?.milliseconds == 1_714_642_200_000)
        #expect(history.partialRefundEvents?[0].refundDetails?.total?.micros == 2_000_000)
        let items = try #require(order.lineItems)
        #expect(items.count == 3)
        #expect(items[0].productId == "premium_monthly")
        #expect(items[0].productTitle == "Premium")
        #expect(items[0].listingPrice?.micros == 9_990_000)
        let subscription = try #require(items[0].subscriptionDetails)
        #expect(subscription.basePlanId == "monthly")
        #expect(subscription.offerId == "intro")
        #expect(subscription.offerPhase == .introductory)
        #expect(subscription.offerPhaseDetails?.prorationPeriodDetails?.originalOfferPhase == .freeTrial)
        #expect(subscription.servicePeriodStartTime?.milliseconds == 1_714_557_600_000)
        #expect(subscription.servicePeriodEndTime?.milliseconds == 1_717_236_000_000)
        #expect(
            items[1].oneTimePurchaseDetails
                == OneTimePurchaseDetails(
                    offerId: "o", purchaseOptionId: "buy", quantity: 3, preorderDetails: PreorderDetails(),
                    rentalDetails: RentalDetails()))
        #expect(items[2].paidAppDetails == PaidAppDetails())
        #expect(items[2].subscriptionDetails == nil)
    }

    @Test func orderRoundTripsThroughItsEncoding() throws {
        let order = try GooglePlayJSON.decode(Order.self, from: Data(Self.orderJSON.utf8))
        let again = try GooglePlayJSON.decode(Order.self, from: GooglePlayJSON.encode(order))
        #expect(again == order)
    }

    @Test func enumerationsAreGooglesStrings() {
        #expect(
            OrderState.allCases.map(\.rawValue) == [
                "STATE_UNSPECIFIED", "PENDING", "PROCESSED", "CANCELED", "PENDING_REFUND", "PARTIALLY_REFUNDED",
                "REFUNDED",
            ])
        #expect(
            OrderSalesChannel.allCases.map(\.rawValue) == [
                "SALES_CHANNEL_UNSPECIFIED", "IN_APP", "PC_EMULATOR", "NATIVE_PC", "PLAY_STORE", "OUTSIDE_PLAY_STORE",
            ])
        #expect(
            OrderOfferPhase.allCases.map(\.rawValue) == [
                "OFFER_PHASE_UNSPECIFIED", "BASE", "INTRODUCTORY", "FREE_TRIAL",
            ])
        #expect(OrderRefundReason.allCases.map(\.rawValue) == ["REFUND_REASON_UNSPECIFIED", "OTHER", "CHARGEBACK"])
        #expect(
            PartialRefundEventState.allCases.map(\.rawValue) == [
                "STATE_UNSPECIFIED", "PENDING", "PROCESSED_SUCCESSFULLY",
            ])
    }

    @Test func unknownEnumerationValuesSurviveRoundTrip() throws {
        let json = #"{"salesChannel":"IN_CAR","state":"DISPUTED"}"#
        let order = try GooglePlayJSON.decode(Order.self, from: Data(json.utf8))
        #expect(order.state?.value == nil)
        #expect(order.state?.rawValue == "DISPUTED")
        #expect(order.salesChannel?.value == nil)
        #expect(order.salesChannel?.rawValue == "IN_CAR")
        #expect(String(decoding: GooglePlayJSON.encode(order), as: UTF8.self) == json)
    }

    @Test func unknownMembersAreKeptAndReencodedUnchanged() throws {
        let json = #"{"futureList":[1,2.5,"x",null,false],"futureMember":{"x":1},"orderId":"GPA.1"}"#
        let order = try GooglePlayJSON.decode(Order.self, from: Data(json.utf8))
        #expect(order.orderId == "GPA.1")
        #expect(
            order.unknownFields == [
                "futureMember": .object(["x": .integer(1)]),
                "futureList": .array([.integer(1), .number(2.5), .string("x"), .null, .bool(false)]),
            ])
        #expect(String(decoding: GooglePlayJSON.encode(order), as: UTF8.self) == json)
    }

    @Test func malformedMoneyNamesItsPath() {
        #expect(
            throws: GooglePlayModelError(.wrongType, path: "developerRevenueInBuyerCurrency.nanos", type: "Order")
        ) {
            try GooglePlayJSON.decode(
                Order.self, from: Data(#"{"developerRevenueInBuyerCurrency":{"nanos":"many"}}"#.utf8))
        }
    }

    @Test func batchGetResponseHoldsOrders() throws {
        let response = try GooglePlayJSON.decode(
            BatchGetOrdersResponse.self, from: Data(#"{"orders":[{"orderId":"GPA.1"},{"orderId":"GPA.2"}]}"#.utf8))
        #expect(response.orders?.map(\.orderId) == ["GPA.1", "GPA.2"])
    }
}
