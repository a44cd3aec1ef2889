import AppStoreModels
import Entitlements

/// Builders for the analytics rule tests: dates as civil days, transactions in one line.
enum AnalyticsFixture {
    static func day(_ year: Int, _ month: Int, _ day: Int) -> Timestamp {
        CalendarDay(year: year, month: month, day: day).start
    }

    static let catalog = ProductCatalog(products: [
        CatalogProduct(
            productId: "monthly", kind: .autoRenewable, subscriptionGroup: "premium",
            duration: SubscriptionPeriod(value: 1, unit: .month)),
        CatalogProduct(
            productId: "yearly", kind: .autoRenewable, subscriptionGroup: "premium",
            duration: SubscriptionPeriod(value: 1, unit: .year)),
        CatalogProduct(
            productId: "weekly", kind: .autoRenewable, subscriptionGroup: "premium",
            duration: SubscriptionPeriod(value: 1, unit: .week)),
        CatalogProduct(productId: "coins", kind: .consumable),
    ])

    static func transaction(
        _ id: String, _ productId: String, from start: Timestamp, to end: Timestamp?, price: Int64,
        currency: String = "USD", periodType: PeriodType = .normal, ownership: Ownership = .purchased,
        storefront: String? = "USA", original: String = "orig-1", signedDate: Timestamp? = nil,
        revokedAt: Timestamp? = nil, revocationType: RevocationType? = nil, revocationReason: Int32? = nil,
        revocationPercentage: Int32? = nil
    ) -> TransactionFact {
        TransactionFact(
            transactionId: id, originalTransactionId: original, productId: productId, purchaseDate: start,
            expiresDate: end, signedDate: signedDate ?? start, revocationDate: revokedAt,
            revocationReason: revocationReason, revocationType: revocationType,
            revocationPercentage: revocationPercentage, periodType: periodType, ownership: ownership,
            environment: .production, price: periodType == .trial ? 0 : price, currency: currency,
            storefront: storefront)
    }

    static let dayMilliseconds: Int64 = 86_400_000
}
