import AppStoreSimulator
import GooglePlaySimulator

/// One kind of demo customer life on Google Play: what the customer does in the Play simulator
/// (which pushes Google's notifications to Storekeeper), the app posting the purchase token to
/// Storekeeper as Google Play Billing hands it over, and pauses in store days, which the
/// accelerated clock shrinks. Renewals and expiry happen on the simulator's clock.
///
/// Every third demo customer (`user-0003`, `user-0006`, …) lives one of these, in this order,
/// so the dashboard shows both stores from the first minute.
/// - Note: Immutable value; `Sendable`.
enum DemoAndroidJourney: String, CaseIterable, Sendable {
    case subscribesMonthly = "Google Play: subscribes monthly, renews"
    case lifetimeRefunded = "Google Play: buys lifetime, refunded"
    case cancelsAfterRenewing = "Google Play: renews, then cancels and expires"
    case coinsPartlyRefunded = "Google Play: buys three coin packs, one refunded"
    case bothStores = "App Store monthly and Google Play yearly"

    /// What the journey needs of the demo: the Play simulator, the App Store side (one
    /// journey buys on both stores) and the app's two ways of posting a purchase.
    struct Context: Sendable {
        var play: DemoPlayStore
        var products: DemoJourney.Products
        var appStore: AppStoreSimulator
        var postToken:
            @Sendable (_ customer: String, _ token: String, _ productId: String, _ product: Bool) async throws -> Void
        var postTransaction: @Sendable (_ customer: String) async throws -> Void
    }

    func live(customer: String, in context: Context) async throws {
        let play = context.play.simulator
        let package = DemoPlayStore.packageName
        let products = context.products
        func wait(days: Double) async throws {
            try await Task.sleep(for: .milliseconds(context.play.scale.milliseconds(days: days)))
        }
        func subscribe(_ productId: String, basePlan: String, days: Double) async throws -> String {
            let token = try await play.purchaseSubscription(
                packageName: package, productId: productId, basePlanId: basePlan,
                periodMillis: context.play.scale.milliseconds(days: days), obfuscatedAccountId: customer)
            try await context.postToken(customer, token, productId, false)
            return token
        }
        func buy(_ productId: String, quantity: Int32 = 1) async throws -> String {
            let token = try await play.purchaseProduct(
                packageName: package, productId: productId, quantity: quantity, obfuscatedAccountId: customer)
            try await context.postToken(customer, token, productId, true)
            return token
        }
        switch self {
        case .subscribesMonthly:
            _ = try await subscribe(products.monthly, basePlan: "monthly", days: 30)
        case .cancelsAfterRenewing:
            let token = try await subscribe(products.monthly, basePlan: "monthly", days: 30)
            try await wait(days: 40)
            try await play.cancel(token)
        case .lifetimeRefunded:
            let token = try await buy(products.lifetime)
            try await wait(days: 3)
            try await play.voidProduct(token, reason: .remorse)
        case .coinsPartlyRefunded:
            let token = try await buy(products.coins, quantity: 3)
            try await wait(days: 2)
            try await play.voidProduct(token, quantity: 1, reason: .notReceived)
        case .bothStores:
            var purchase = SimulatorAction(.purchase, customer: customer, productId: products.monthly)
            purchase.introductoryOffer = false
            _ = try await context.appStore.perform(purchase)
            try await context.postTransaction(customer)
            try await wait(days: 5)
            _ = try await subscribe(products.yearly, basePlan: "yearly", days: 365)
        }
    }
}
