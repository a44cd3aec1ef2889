import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting

@testable import Storage

/// The app of issue 13's rebuild tests: customers whose facts were stored without aggregates
/// (as before analytics existed), so every batch of a rebuild has work. Customer `user-<i>` has
/// one monthly USD 9.99 Sandbox purchase on day `i % 5` of December (at 01:00 UTC), with
/// transaction id `<idPrefix><i>`.
enum UnaggregatedCustomers {
    static let day: Int64 = 86_400_000
    static let december = TestSigning.signedDate
    /// The price of each purchase, in milliunits.
    static let price = 9990

    static func store(_ count: Int, appId: String, idPrefix: String, in store: any Store) async throws {
        try await store.write { transaction in
            for index in 0..<count {
                let customer = try transaction.ensureCustomer(
                    appId: appId, appUserId: "user-\(index)", at: december)
                let id = "\(idPrefix)\(index)"
                try transaction.claimOriginalTransaction(id, customerId: customer.id, at: december)
                let purchase = december.adding(milliseconds: Int64(index % 5) * day + 3_600_000)
                _ = try transaction.insertTransaction(
                    NewTransaction(
                        appId: appId, jws: "jws.\(id)",
                        fact: TransactionFact(
                            transactionId: id, originalTransactionId: id, productId: "com.example.monthly",
                            productKind: .autoRenewable, subscriptionGroup: "group", purchaseDate: purchase,
                            expiresDate: purchase.adding(milliseconds: 30 * day), signedDate: purchase,
                            environment: .sandbox, price: Int64(price), currency: "USD", storefront: "USA"),
                        source: "test", receivedAt: december))
            }
        }
    }

    /// The app's daily rows as stored, and as a fresh computation from every customer's facts
    /// under the stored commission terms gives them at `now`, with how many customers it has.
    static func rows(appId: String, now: Timestamp, in store: any Store) async throws -> (
        stored: Set<AnalyticsDailyRow>, expected: Set<AnalyticsDailyRow>, customers: Int
    ) {
        try await store.read { reader in
            let catalog = try reader.catalog(appId: appId) ?? ProductCatalog(products: [])
            let rule = try reader.analyticsSettings(appId: appId)?.settings.commissionRule ?? CommissionRule()
            var sums: [String: [AnalyticsDailyKey: AnalyticsMeasures]] = [:]
            let ids = try reader.customerIds(appId: appId)
            for id in ids {
                let facts = try reader.facts(customerId: id)
                for environment in [AppStoreEnvironment.production, .sandbox] {
                    for (key, measures) in AnalyticsContribution.of(
                        facts: facts, environment: environment, catalog: catalog, rule: rule, now: now)
                    {
                        sums[environment.rawValue, default: [:]][key, default: AnalyticsMeasures()] =
                            sums[environment.rawValue, default: [:]][key, default: AnalyticsMeasures()] + measures
                    }
                }
            }
            let expected = Set(
                sums.flatMap { environment, keys in
                    keys.filter { !$0.value.isZero }.map {
                        AnalyticsDailyRow(environment: environment, key: $0.key, measures: $0.value)
                    }
                })
            return (Set(try reader.analyticsRows(appId: appId)), expected, ids.count)
        }
    }
}
