import AppStoreClient
import Foundation
import GooglePlayModels
import Testing

@testable import GooglePlayClient

/// `orders.get` and `orders.batchget` on the discovery document's paths, with the client's
/// retries and Google's errors.
struct PlayOrdersClientTests {
    static let order = #"""
        {"orderId":"GPA.1..0","developerRevenueInBuyerCurrency":{"currencyCode":"EUR","units":"8","nanos":490000000}}
        """#

    @Test func orderPathsAreThoseOfTheDiscoveryDocument() async throws {
        let transport = ScriptedTransport([
            .respond(200, PlayDeveloperAPIClientTests.tokenOK), .respond(200, Self.order),
            .respond(200, #"{"orders":[{"orderId":"GPA.1"},{"orderId":"GPA.2 x"}]}"#),
        ])
        let client = PlayDeveloperAPIClientTests.client(transport, clock: SteppedClock())
        let answer = try await client.orderAnswer(packageName: "com.app", orderId: "GPA.1..0")
        #expect(answer.value.orderId == "GPA.1..0")
        #expect(answer.value.developerRevenueInBuyerCurrency?.micros == 8_490_000)
        #expect(answer.body == Data(Self.order.utf8))
        let orders = try await client.orders(packageName: "com.app", orderIds: ["GPA.1", "GPA.2 x"])
        #expect(orders.map(\.orderId) == ["GPA.1", "GPA.2 x"])
        #expect(
            transport.sent.map(\.url.absoluteString) == [
                "https://oauth2.test/token",
                "https://play.test/androidpublisher/v3/applications/com.app/orders/GPA.1..0",
                "https://play.test/androidpublisher/v3/applications/com.app/orders:batchGet?orderIds=GPA.1&orderIds=GPA.2%20x",
            ])
        #expect(transport.sent.map(\.method) == ["POST", "GET", "GET"])
    }

    @Test func orderReadsAreRetriedOn5xxAndGooglesErrorsComeBackTyped() async throws {
        let clock = SteppedClock()
        let notFound = #"{"error":{"code":404,"message":"The order was not found.","status":"NOT_FOUND"}}"#
        let transport = ScriptedTransport([
            .respond(200, PlayDeveloperAPIClientTests.tokenOK),
            .respond(503, #"{"error":{"code":503,"message":"Backend Error","status":"UNAVAILABLE"}}"#),
            .respond(200, Self.order), .respond(404, notFound),
        ])
        let client = PlayDeveloperAPIClientTests.client(transport, clock: clock)
        let order = try await client.order(packageName: "p", orderId: "GPA.1..0")
        #expect(order.developerRevenueInBuyerCurrency?.currencyCode == "EUR")
        #expect(clock.sleeps == [.milliseconds(500)])
        do {
            _ = try await client.order(packageName: "p", orderId: "GPA.404")
            Issue.record("an unknown order was found")
        } catch {
            #expect(error.code == .apiError)
            #expect(error.httpStatus == 404)
            #expect(error.googleStatus == "NOT_FOUND")
            #expect(error.googleMessage == "The order was not found.")
            #expect(error.method == "orders.get")
        }
        #expect(transport.sent.count == 4)
    }

    @Test func batchGetRefusesEmptyTooManyAndRepeatedIdsBeforeSending() async throws {
        let transport = ScriptedTransport([.respond(200, PlayDeveloperAPIClientTests.tokenOK)])
        let client = PlayDeveloperAPIClientTests.client(transport, clock: SteppedClock())
        let refused: [[String]] = [[], (0...1000).map { "GPA.\($0)" }, ["GPA.1", "GPA.1"], [".."]]
        for ids in refused {
            do {
                _ = try await client.orders(packageName: "p", orderIds: ids)
                Issue.record("\(ids.count) ids were sent")
            } catch {
                #expect(error.code == .invalidRequest)
            }
        }
        #expect(transport.sent.isEmpty)
    }
}
