import AppStoreModels
import Entitlements
import Foundation
import GooglePlaySimulator
import Storage
import StorekeeperTesting
import Testing

/// Issue 15: exact Play revenue from the orders API through a running server and the Play
/// simulator. The same purchase and renewal give the commission rule's proceeds with the app's
/// `readOrderRevenue` off (no order is read) and the orders' exact developer revenue with it
/// on (each new order read once, after the purchase's and the renewal's reads).
@Suite(.serialized) struct PlayOrderRevenueEndToEndTests {
    static let day: Int64 = 86_400_000
    static let package = EndToEndHarness.playPackage

    /// A purchase of `monthly` (USD 9.99 in the catalog and the simulator), posted by alice and
    /// renewed once, the renewal order's exact revenue set to 7.654321 USD; the Play side's
    /// daily sandbox totals over both charges, and which of the two orders are stored.
    static func run(readOrderRevenue: Bool) async throws -> (measures: AnalyticsMeasures, stored: Set<String>) {
        let harness = try await EndToEndHarness(database: .sqlite)
        do {
            let scenario = try EndToEndScenario.load("new-subscription-renewals.json")
            try await harness.configure(scenario)
            try await harness.configurePlay()
            var products = EndToEndHarness.catalog(scenario.app.products, entitlements: scenario.entitlements)
            for index in products.indices {
                products[index]["referencePrice"] = ["milliunits": 9990, "currency": "USD"]
            }
            try harness.expect(
                200,
                await harness.request(
                    "PUT", "/v1/apps/\(harness.appId)/catalog", key: harness.secretKey, json: ["products": products]))
            let settings = try harness.expect(
                200,
                await harness.request(
                    "PUT", "/v1/admin/apps/\(harness.appId)/googleplay", key: EndToEndHarness.adminKey,
                    json: ["readOrderRevenue": readOrderRevenue]))
            #expect(settings.json["readOrderRevenue"] as? Bool == readOrderRevenue)
            #expect(settings.json["acknowledgePurchases"] as? Bool == true)

            try await harness.play.setPrice(productId: "monthly", micros: 9_990_000, currency: "USD")
            let start = harness.clock.now
            let token = try await harness.play.purchaseSubscription(
                packageName: Self.package, productId: "monthly", obfuscatedAccountId: "alice-account")
            try harness.expect(
                200,
                await harness.request(
                    "POST", "/v1/apps/\(harness.appId)/customers/alice/purchases/googleplay", key: harness.publicKey,
                    json: [
                        "packageName": Self.package, "productId": "monthly", "purchaseToken": token,
                        "type": "subscription",
                    ]))
            // Acknowledged, so Google's refund of unacknowledged purchases stays out of it.
            _ = await harness.application.jobWorker.runDue()
            #expect(await harness.play.subscription(token)?.acknowledged == true)
            let first = try #require(await harness.play.subscription(token)?.orderId)
            await harness.play.setDeveloperRevenue(orderId: first + "..0", micros: 7_654_321)
            harness.clock.advance(milliseconds: 29 * Self.day)
            try await harness.play.renew(token)
            #expect(await harness.play.pushes.map(\.status) == [200, 200])

            let appId = harness.appId
            let from = CalendarDay(containing: start)
            let through = CalendarDay(containing: harness.clock.now)
            let result = try await harness.store.read { reader in
                (
                    try reader.analyticsDailyTotals(
                        appId: appId, environment: .sandbox, from: from, through: through,
                        filter: AnalyticsFilter(store: .googlePlay)),
                    try reader.storedPlayOrderIds(appId: appId, orderIds: [first, first + "..0"])
                )
            }
            await harness.stop()
            return (result.0.reduce(AnalyticsMeasures()) { $0 + $1.measures }, result.1)
        } catch {
            await harness.stop()
            throw error
        }
    }

    @Test func switchOffKeepsTheCommissionRule() async throws {
        let (measures, stored) = try await Self.run(readOrderRevenue: false)
        // Two charges of 9.99 at 15 %: 8.4915 → 8.492 each.
        #expect(measures.transactions == 2)
        #expect(measures.gross == 19_980)
        #expect(measures.proceeds == 16_984)
        #expect(stored == [])
    }

    @Test func switchOnTakesEachOrdersDeveloperRevenue() async throws {
        let (measures, stored) = try await Self.run(readOrderRevenue: true)
        // The first order: the simulator's 9.99 × 0.85 = 8.4915 USD exactly (8.492 to the
        // milliunit, as the rule gives); the renewal's: 7.654321 → 7.654.
        #expect(measures.transactions == 2)
        #expect(measures.gross == 19_980)
        #expect(measures.proceeds == 8_492 + 7_654)
        #expect(stored.count == 2)
    }
}
