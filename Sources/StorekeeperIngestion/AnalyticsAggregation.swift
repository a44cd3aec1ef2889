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
    /// Replaces the customer's stored contribution, periods and cohorts by `figures`, adding the
    /// differences to the shared rows.
    static func apply(
        _ figures: AnalyticsFigures, customer: CustomerRecord, environment: AppStoreEnvironment,
        in transaction: any StoreTransaction
    ) throws {
        try transaction.applyAnalyticsContribution(
            customerId: customer.id, appId: customer.appId, environment: environment, figures.daily)
        try transaction.applyAnalyticsPeriods(
            customerId: customer.id, appId: customer.appId, environment: environment, figures.periods)
        try transaction.applyAnalyticsCohorts(
            customerId: customer.id, appId: customer.appId, environment: environment, figures.cohorts)
    }

    /// What a rebuild found.
    public struct RebuildResult: Sendable, Hashable {
        /// Customers recomputed (all of the app's when the rebuild was not stopped).
        public var customers: Int
        /// Non-zero daily rows when the rebuild started, and when it ended.
        public var rowsBefore: Int
        public var rowsAfter: Int
        /// Customers whose stored contribution differed from the one their facts give.
        public var contributionsChanged: Int
        /// Daily, retention and LTV rows that differed from the sum of the stored contributions
        /// (set to it).
        public var rowsRepaired: Int
        /// Whether `shouldStop` ended the rebuild before every customer and the last step: what
        /// was done is consistent per customer; a new rebuild completes it.
        public var stopped: Bool

        /// Whether anything stored differed from what the facts give.
        public var changed: Bool { contributionsChanged > 0 || rowsRepaired > 0 }
    }

    /// Customers recomputed per transaction: each batch holds its customers' locks (and the
    /// daily rows it changes) only until it commits, so ingestion for the app waits at most one
    /// batch, never the whole rebuild.
    public static let rebuildBatchSize = 100

    /// Recomputes the app's aggregates from its stored facts without stopping ingestion.
    ///
    /// Customers go in batches of `batchSize`, one transaction each: every customer of the batch
    /// is locked first (in id order, as ingestion locks one), then its contribution is recomputed
    /// from its facts for both environments and, where the stored one differs, replaced through
    /// `applyAnalyticsContribution` (the path ingestion takes; the daily rows get the
    /// difference). A last short transaction sets the daily rows to the sum of the stored
    /// contributions (`reconcileAnalyticsDaily`), which repairs rows changed behind the
    /// contributions' back. Customers created meanwhile are kept by their own ingestion.
    ///
    /// `progress` is called with the customers done and the total: once before the first batch,
    /// then after each batch commits. `shouldStop` is asked before each batch: when it answers
    /// `true` the rebuild returns with `stopped` set, having skipped the last step.
    public static func rebuild(
        appId: String, store: any Store, now: Timestamp, batchSize: Int = AnalyticsAggregation.rebuildBatchSize,
        progress: @Sendable (_ done: Int, _ total: Int) async -> Void = { _, _ in },
        shouldStop: @Sendable () -> Bool = { false }
    ) async throws -> RebuildResult {
        let (customers, before) = try await store.read { reader in
            (try reader.customerIds(appId: appId), try reader.analyticsRows(appId: appId).count)
        }
        let size = max(1, batchSize)
        var result = RebuildResult(
            customers: 0, rowsBefore: before, rowsAfter: before, contributionsChanged: 0, rowsRepaired: 0,
            stopped: false)
        await progress(0, customers.count)
        for start in stride(from: 0, to: customers.count, by: size) {
            if shouldStop() {
                result.stopped = true
                result.rowsAfter = try await store.read { reader in try reader.analyticsRows(appId: appId).count }
                return result
            }
            let batch = Array(customers[start..<min(start + size, customers.count)])
            // Retried: on PostgreSQL a group commit holding one of these customers while it waits
            // for a daily row this batch changed is a deadlock, and either side may be aborted.
            result.contributionsChanged += try await store.write(retries: 3) { transaction in
                try Self.recompute(customers: batch, appId: appId, in: transaction, now: now)
            }
            result.customers += batch.count
            await progress(result.customers, customers.count)
        }
        let (repaired, after) = try await store.write(retries: 3) { transaction in
            (
                try transaction.reconcileAnalyticsDaily(appId: appId)
                    + transaction.reconcileAnalyticsCohorts(appId: appId),
                try transaction.analyticsRows(appId: appId).count
            )
        }
        result.rowsRepaired = repaired
        result.rowsAfter = after
        return result
    }

    /// One batch of `rebuild`: how many of the customers had a stored contribution that differed.
    static func recompute(
        customers: [Int64], appId: String, in transaction: any StoreTransaction, now: Timestamp
    ) throws -> Int {
        let catalog = try transaction.catalog(appId: appId) ?? ProductCatalog(products: [])
        let rule = try transaction.analyticsSettings(appId: appId)?.settings.commissionRule ?? CommissionRule()
        // Every lock before any daily row: a batch never waits for a customer while it holds a
        // row that customer's ingestion (which locks the customer first) needs next.
        let locked = try customers.map { try transaction.lockCustomer(id: $0) }
        var changed = 0
        for customer in locked {
            let facts = try transaction.facts(customerId: customer.id)
            var differed = false
            for environment in [AppStoreEnvironment.production, .sandbox] {
                let figures = AnalyticsContribution.all(
                    facts: facts, environment: environment, catalog: catalog, rule: rule, now: now)
                if try transaction.applyAnalyticsContribution(
                    customerId: customer.id, appId: appId, environment: environment, figures.daily)
                {
                    differed = true
                }
                if try transaction.applyAnalyticsPeriods(
                    customerId: customer.id, appId: appId, environment: environment, figures.periods)
                {
                    differed = true
                }
                if try transaction.applyAnalyticsCohorts(
                    customerId: customer.id, appId: appId, environment: environment, figures.cohorts)
                {
                    differed = true
                }
            }
            if differed { changed += 1 }
        }
        return changed
    }
}
