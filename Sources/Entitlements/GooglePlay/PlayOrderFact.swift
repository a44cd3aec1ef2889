import AppStoreModels

/// One order as the Play Developer API's `orders.get` answered it: what the buyer paid
/// (`total`, `tax`) and the developer's exact revenue (`developerRevenueInBuyerCurrency`,
/// after Google's fee and tax), read at `readAt`. Unique per (app, order id); a later read
/// replaces an earlier one.
///
/// Analytics and the engine's revenue take `developerRevenue` as the order's proceeds instead
/// of `PlayCommissionRule`'s estimate (`PlayRevenue`); an order never read keeps the estimate.
/// - Note: Immutable value; `Sendable`.
public struct PlayOrderFact: Sendable, Hashable, Codable {
    public var packageName: String
    public var orderId: String
    public var purchaseToken: String
    public var readAt: Timestamp
    /// The test flag of the purchase the order belongs to (the order itself does not say).
    public var isTestPurchase: Bool
    /// `state`, raw (`PROCESSED`, `REFUNDED`, …; unknown values kept).
    public var state: String?
    public var total: Money?
    public var tax: Money?
    /// `developerRevenueInBuyerCurrency`; `nil` when Google gave none (the estimate stays).
    public var developerRevenue: Money?

    public init(
        packageName: String, orderId: String, purchaseToken: String, readAt: Timestamp, isTestPurchase: Bool,
        state: String?, total: Money?, tax: Money?, developerRevenue: Money?
    ) {
        self.packageName = packageName
        self.orderId = orderId
        self.purchaseToken = purchaseToken
        self.readAt = readAt
        self.isTestPurchase = isTestPurchase
        self.state = state
        self.total = total
        self.tax = tax
        self.developerRevenue = developerRevenue
    }

    public var environment: AppStoreEnvironment { isTestPurchase ? .sandbox : .production }
}
