import AppStoreModels
import Entitlements

/// Which of a customer's purchases to ask Apple about, and how.
///
/// Get All Subscription Statuses and Get Transaction History answer for the whole Apple account
/// that owns the transaction id given, whichever of its transactions that is. Asking once per
/// purchase fetched the same account's history again for every purchase: a customer with 500
/// consumables cost about 1,000 calls and 500 copies of the history in one request (review
/// finding). A plan asks once per account instead, and never more than
/// `maximumCallsPerEndpoint` times a read.
/// - Note: Immutable value; `Sendable`.
struct AppleAccountReadPlan: Sendable, Hashable {
    /// Statuses are asked with these original transaction ids (auto-renewable subscriptions),
    /// in order, skipping those an earlier answer covered.
    var statusIds: [String]
    /// History is asked with these (purchases history keeps: non-consumables, non-renewing
    /// subscriptions), in order, skipping those an earlier answer covered. Consumables are never
    /// asked about: history v2 leaves finished ones out, so an answer never covers them.
    var historyIds: [String]
    /// All ids are one Apple account's (a receipt's): one answer of each endpoint covers all,
    /// and the next id is asked only when Apple does not know the one before.
    var oneAccount = false

    /// At most this many calls of each endpoint per read: a customer spread over more Apple
    /// accounts than this is read in part (the rest stays as stored), never at unbounded cost.
    static let maximumCallsPerEndpoint = 5

    /// The plan for a customer of whom `info` is the stored state in the environment synced;
    /// without one (nothing known there yet), every id the customer owns is a candidate for
    /// both endpoints, within the call bound.
    static func customer(_ info: CustomerInfo?, owned: [String]) -> AppleAccountReadPlan {
        guard let info else { return AppleAccountReadPlan(statusIds: owned.sorted(), historyIds: owned.sorted()) }
        // Every owned id that is not a one-time purchase here may be a subscription (CustomerInfo
        // shows one subscription per product, and a second Apple account may hold another).
        let oneTime = Set(info.nonSubscriptionPurchases.map(\.originalTransactionId))
        let kept = Set(info.nonSubscriptionPurchases.filter { $0.kind != .consumable }.map(\.originalTransactionId))
        return AppleAccountReadPlan(
            statusIds: Set(owned).subtracting(oneTime).sorted(), historyIds: kept.sorted())
    }

    /// The plan for one receipt: every purchase in it is one Apple account's.
    static func receipt(transactionIds: [String]) -> AppleAccountReadPlan {
        AppleAccountReadPlan(statusIds: transactionIds, historyIds: transactionIds, oneAccount: true)
    }
}

extension PurchaseIngestor {
    /// Reads what `plan` names from Apple, every item verified, each transaction and renewal
    /// info once. A transaction Apple does not know (an id from another environment, a
    /// purchase since removed) is skipped: one such id must not fail the whole read; but a
    /// one-account read (a receipt) none of whose ids Apple knows fails with `transactionNotFound`.
    func read(
        _ plan: AppleAccountReadPlan, app: AppRuntime, environment: AppStoreEnvironment,
        via connection: any AppStoreConnection
    ) async throws(IngestionError) -> Facts {
        var facts = Facts()
        for endpoint in [Endpoint.statuses, .history] {
            let ids = endpoint == .statuses ? plan.statusIds : plan.historyIds
            var covered = Set<String>()
            var calls = 0
            var unknown: IngestionError?
            var answered = false
            for id in ids where !covered.contains(id) {
                guard calls < AppleAccountReadPlan.maximumCallsPerEndpoint else { break }
                calls += 1
                let answer: Facts
                do {
                    answer =
                        endpoint == .statuses
                        ? try await statuses(app: app, environment: environment, transactionId: id, via: connection)
                        : try await history(app: app, environment: environment, transactionId: id, via: connection)
                } catch {
                    guard error.code == .transactionNotFound else { throw error }
                    unknown = error
                    covered.insert(id)
                    continue
                }
                answered = true
                facts.mergeUnique(answer)
                if plan.oneAccount { break }
                covered.insert(id)
                covered.formUnion(answer.transactions.map(\.fact.originalTransactionId))
                covered.formUnion(answer.renewals.map(\.fact.originalTransactionId))
            }
            // A receipt whose every purchase Apple does not know is a failure to report, not an
            // empty import (the backfill counts it as `transaction_not_found`).
            if plan.oneAccount, !answered, let unknown { throw unknown }
        }
        return facts
    }

    private enum Endpoint { case statuses, history }
}
