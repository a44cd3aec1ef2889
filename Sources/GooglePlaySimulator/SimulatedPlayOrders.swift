import GooglePlayModels

/// The orders the Play simulator answers `orders.get` with: one per charge of a subscription
/// (the first order and each renewal `orderId..N`) and one per one-time purchase.
///
/// Each order has a price (the product's, `PlaySimulator.setPrice`; `defaultPriceMicros` in
/// USD otherwise; times the quantity of a one-time purchase), no tax, and a developer revenue
/// of the price less Google's 15 % fee (rounded down to the micro) unless a test set the exact
/// figure of that order (`PlaySimulator.setDeveloperRevenue`), so tests assert exact values.
/// - Note: Value; `Sendable` (kept inside the `PlaySimulator` actor).
struct SimulatedPlayOrderPricing: Sendable {
    /// 4.99 USD.
    static let defaultPriceMicros: Int64 = 4_990_000
    static let defaultCurrency = "USD"
    /// Google's fee the simulator takes when no exact revenue is set: 15 %.
    static let feeBasisPoints: Int64 = 1500

    var prices: [String: (micros: Int64, currency: String)] = [:]
    var developerRevenueMicros: [String: Int64] = [:]

    /// The order `orderId` of `productId` for `quantity` units, created at `createMillis`.
    func order(
        orderId: String, token: String, productId: String, quantity: Int32, createMillis: Int64,
        refunded: Bool, subscription: SubscriptionDetails?
    ) -> Order {
        let price = prices[productId] ?? (micros: Self.defaultPriceMicros, currency: Self.defaultCurrency)
        let total = price.micros * Int64(max(1, quantity))
        let revenue = developerRevenueMicros[orderId] ?? total * (10_000 - Self.feeBasisPoints) / 10_000
        func money(_ micros: Int64) -> Money {
            Money(
                currencyCode: price.currency, units: String(micros / 1_000_000),
                nanos: Int32(micros % 1_000_000) * 1000)
        }
        let created = GoogleDateTime(milliseconds: createMillis)
        return Order(
            orderId: orderId, purchaseToken: token, state: PlayRawEnum(refunded ? .refunded : .processed),
            salesChannel: PlayRawEnum(.inApp), createTime: created, lastEventTime: created,
            buyerAddress: BuyerAddress(buyerCountry: "US"), total: money(total), tax: money(0),
            developerRevenueInBuyerCurrency: money(revenue),
            lineItems: [
                LineItem(
                    productId: productId, listingPrice: money(price.micros), total: money(total), tax: money(0),
                    oneTimePurchaseDetails: subscription == nil ? OneTimePurchaseDetails(quantity: quantity) : nil,
                    subscriptionDetails: subscription)
            ],
            orderDetails: OrderDetails(taxInclusive: true),
            orderHistory: OrderHistory(processedEvent: ProcessedEvent(eventTime: created)))
    }
}
