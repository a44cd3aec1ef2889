import AppStoreModels
import Entitlements
import Storage

/// Keeps the analytics aggregates in the transaction that commits a customer's facts: the
/// customer's new `AnalyticsContribution` replaces the old one, and the difference is added to
/// the daily rows (`analytics_daily`).
///
/// Why in the same transaction rather than a worker reading the event log: the aggregates are
/// then exactly as current as the facts (a figure never lags an answered purchase), there is no
/// position to keep, and with several instances on one PostgreSQL nothing new is needed: the
/// customer's row lock already serializes its updates, and daily rows are upserted in key order. A log
/// reader would have to cope with ids committed out of order by concurrent transactions. The
/// cost is an upsert of a few rows per re-evaluation; today's rows are shared by every
/// concurrent writer of the app, which serializes those writes at the row until commit, and two
/// group commits that each update several customers can deadlock on them: PostgreSQL aborts one
/// (`conflictRetry`) and the ingestion writer re-runs it.
/// - Note: Stateless; runs on the store's thread inside a write body.
public enum AnalyticsAggregation {
    static func update(
        customer: CustomerRecord, environment: AppStoreEnvironment, facts: [Fact], catalog: ProductCatalog,
        in transaction: any StoreTransaction, now: Timestamp
    ) throws {
        let settings = try transaction.analyticsSettings(appId: customer.appId)?.settings ?? AnalyticsSettings()
        let contribution = AnalyticsContribution.of(
            facts: facts, environment: environment, catalog: catalog, rule: settings.commissionRule, now: now)
        try transaction.applyAnalyticsContribution(
            customerId: customer.id, appId: customer.appId, environment: environment, contribution)
    }

    /// What a rebuild found.
    public struct RebuildResult: Sendable, Hashable {
        public var customers: Int
        public var rowsBefore: Int
        public var rowsAfter: Int
        /// Whether any non-zero daily row differs from before.
        public var changed: Bool
    }

    /// Recomputes the app's aggregates from its stored facts, in one transaction: every customer
    /// is locked first (so no ingestion of theirs interleaves), the rows and contributions are
    /// cleared, and each customer's contribution is added again for both environments.
    public static func rebuild(appId: String, store: any Store, now: Timestamp) async throws -> RebuildResult {
        try await store.write { transaction in
            let before = try transaction.analyticsRows(appId: appId)
            let catalog = try transaction.catalog(appId: appId) ?? ProductCatalog(products: [])
            let rule = try transaction.analyticsSettings(appId: appId)?.settings.commissionRule ?? CommissionRule()
            let customers = try transaction.customerIds(appId: appId).map { try transaction.lockCustomer(id: $0) }
            try transaction.clearAnalytics(appId: appId)
            let cache = CustomerEvaluationCache(capacity: 1)
            for customer in customers {
                let facts = try cache.facts(customerId: customer.id, in: transaction)
                for environment in [AppStoreEnvironment.production, .sandbox] {
                    let contribution = AnalyticsContribution.of(
                        facts: facts, environment: environment, catalog: catalog, rule: rule, now: now)
                    try transaction.applyAnalyticsContribution(
                        customerId: customer.id, appId: appId, environment: environment, contribution)
                }
            }
            let after = try transaction.analyticsRows(appId: appId)
            return RebuildResult(
                customers: customers.count, rowsBefore: before.count, rowsAfter: after.count, changed: before != after)
        }
    }
}
