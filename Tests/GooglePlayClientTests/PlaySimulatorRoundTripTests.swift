import AppStoreClient
import AppStoreModels
import AppStoreSimulator
import Foundation
import GooglePlayModels
import GooglePlaySimulator
import GooglePlayTrust
import HTTPServer
import Testing

@testable import GooglePlayClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The client against the Play simulator over real HTTP: the simulator's wire format is what the
/// client reads, and Google's error shapes come back as typed errors.
struct PlaySimulatorRoundTripTests {
    /// The Play simulator served over loopback HTTP, a service account of it, and a client
    /// signed in with that account's tokens.
    struct World {
        var play: PlaySimulator
        var base: URL
        var account: ServiceAccountKey
        var tokens: AccessTokenProvider
        var client: PlayDeveloperAPIClient
    }

    /// Runs `body` in a fresh `World`; the server is stopped after it.
    static func withSimulator(_ body: (World) async throws -> Void) async throws {
        let clock = ManualClock(Timestamp(Date()))
        let play = try PlaySimulator(
            packageNames: ["com.example.app"], clock: clock, push: .init(url: nil, audience: "aud"), transport: nil)
        var router = Router()
        PlaySimulatorRoutes.add(play, to: &router)
        let server = try HTTPServer(responder: router.buildResponder())
        do {
            let base = server.baseURL
            let account = try await play.createServiceAccount(
                email: "sa@sim.iam.gserviceaccount.com", tokenURI: base.appendingPathComponent("token"))
            let tokens = AccessTokenProvider(key: account)
            try await body(
                World(
                    play: play, base: base, account: account, tokens: tokens,
                    client: PlayDeveloperAPIClient(baseURL: base, tokens: tokens)))
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test func clientReadsAcknowledgesAndListsThroughTheSimulator() async throws {
        try await Self.withSimulator { world in
            let (play, base, account, tokens, client) = (
                world.play, world.base, world.account, world.tokens, world.client
            )

            let subscription = try await play.purchaseSubscription(
                packageName: "com.example.app", productId: "premium", obfuscatedAccountId: "acct")
            var purchase = try await client.subscriptionV2(packageName: "com.example.app", token: subscription)
            #expect(purchase.subscriptionState == .active)
            #expect(purchase.acknowledgementState == .pending)
            #expect(purchase.externalAccountIdentifiers?.obfuscatedExternalAccountId == "acct")
            try await client.acknowledgeSubscription(
                packageName: "com.example.app", subscriptionId: "premium", token: subscription)
            purchase = try await client.subscriptionV2(packageName: "com.example.app", token: subscription)
            #expect(purchase.acknowledgementState == .acknowledged)

            let coins = try await play.purchaseProduct(packageName: "com.example.app", productId: "coins", quantity: 3)
            try await client.acknowledgeProduct(packageName: "com.example.app", productId: "coins", token: coins)
            try await client.consumeProduct(packageName: "com.example.app", productId: "coins", token: coins)
            let product = try await client.product(packageName: "com.example.app", productId: "coins", token: coins)
            #expect(product.acknowledgementState == .acknowledged)
            #expect(product.consumptionState == .consumed)
            #expect(product.quantity == 3)

            try await play.voidProduct(coins, quantity: 1)
            try await play.voidSubscription(subscription)
            let voided = try await client.allVoidedPurchases(
                packageName: "com.example.app", query: VoidedPurchasesQuery(maxResults: 1))
            #expect(voided.map(\.purchaseToken) == [coins, subscription])
            #expect(voided.map(\.voidedQuantity) == [1, nil])
            #expect(await tokens.exchangeCount == 1)

            do {
                _ = try await client.subscriptionV2(packageName: "com.example.app", token: "unknown")
                Issue.record("an unknown token was found")
            } catch let error as GooglePlayClientError {
                #expect(error.httpStatus == 404)
                #expect(error.googleStatus == "NOT_FOUND")
                #expect(error.googleMessage == "The purchase token was not found.")
            }

            // A key the simulator never issued: the token endpoint answers invalid_grant.
            let stranger = ServiceAccountKey(
                clientEmail: "sa@sim.iam.gserviceaccount.com", privateKeyId: account.privateKeyId,
                privateKey: try RSAPrivateKey.generate(), tokenURI: account.tokenURI)
            do {
                _ = try await AccessTokenProvider(key: stranger).accessToken()
                Issue.record("a forged assertion got a token")
            } catch let error as GooglePlayClientError {
                #expect(error.code == .tokenRefused)
                #expect(error.oauthError == "invalid_grant")
            }

            // Without credentials, Google's 401 shape.
            let (body, response) = try await URLSession.shared.data(
                from: base.appendingPathComponent(
                    "androidpublisher/v3/applications/com.example.app/purchases/voidedpurchases"))
            #expect((response as? HTTPURLResponse)?.statusCode == 401)
            let error = try GooglePlayJSON.decode(GoogleErrorResponse.self, from: body)
            #expect(error.error.status == "UNAUTHENTICATED")
            #expect(error.error.code == 401)

            // The published key set is what push tokens verify against.
            let keySet = try await GoogleKeySetURLLoader(url: base.appendingPathComponent("oauth2/v3/certs"))
                .loadKeySet()
            #expect(try GoogleKeySet(json: keySet).keys.keys.sorted() == ["sim-key-1"])
        }
    }

    /// `orders.get` and `orders.batchget` through the simulator: each charge of a subscription
    /// and each one-time purchase is an order with the price set and 85 % of it as developer
    /// revenue unless a test set the exact figure; an unknown order is Google's 404.
    @Test func clientReadsOrdersThroughTheSimulator() async throws {
        try await Self.withSimulator { world in
            let (play, client) = (world.play, world.client)
            try await play.setPrice(productId: "premium", micros: 9_990_000, currency: "EUR")
            let token = try await play.purchaseSubscription(packageName: "com.example.app", productId: "premium")
            try await play.renew(token)
            let first = try #require(await play.subscription(token)).orderId
            await play.setDeveloperRevenue(orderId: first + "..0", micros: 7_000_000)
            let coins = try await play.purchaseProduct(packageName: "com.example.app", productId: "coins", quantity: 3)
            let coinsOrder = try #require(await play.productPurchase(coins)).orderId

            let order = try await client.order(packageName: "com.example.app", orderId: first)
            #expect(order.purchaseToken == token)
            #expect(order.state == .processed)
            #expect(order.total == Money(currencyCode: "EUR", units: "9", nanos: 990_000_000))
            #expect(order.developerRevenueInBuyerCurrency == Money(currencyCode: "EUR", units: "8", nanos: 491_500_000))
            #expect(order.lineItems?.first?.subscriptionDetails?.basePlanId == "monthly")
            let orders = try await client.orders(
                packageName: "com.example.app", orderIds: [first + "..0", coinsOrder])
            #expect(orders.map(\.orderId) == [first + "..0", coinsOrder])
            #expect(orders.map { $0.developerRevenueInBuyerCurrency?.micros } == [7_000_000, 12_724_500])
            #expect(orders.map { $0.total?.micros } == [9_990_000, 14_970_000])
            #expect(orders[1].developerRevenueInBuyerCurrency?.currencyCode == "USD")
            #expect(orders[1].lineItems?.first?.oneTimePurchaseDetails?.quantity == 3)

            for unknown in [first + "..1", "GPA.none"] {
                do {
                    _ = try await client.order(packageName: "com.example.app", orderId: unknown)
                    Issue.record("an order not charged yet was found")
                } catch let error as GooglePlayClientError {
                    #expect(error.httpStatus == 404)
                    #expect(error.googleStatus == "NOT_FOUND")
                    #expect(error.googleMessage == "The order was not found.")
                }
            }
            do {
                _ = try await client.orders(packageName: "com.example.app", orderIds: [first, "GPA.none"])
                Issue.record("a batch with an unknown order succeeded")
            } catch let error as GooglePlayClientError {
                #expect(error.httpStatus == 404)
            }
        }
    }
}
