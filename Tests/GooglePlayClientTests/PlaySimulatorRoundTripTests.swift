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
    @Test func clientReadsAcknowledgesAndListsThroughTheSimulator() async throws {
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
            let client = PlayDeveloperAPIClient(baseURL: base, tokens: tokens)

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
            } catch {
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
            } catch {
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
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
