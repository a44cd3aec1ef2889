import AppStoreModels
import Entitlements
import Storage

/// The one commit path: a `FactBatch` becomes raw payloads, facts, an owner, new customer
/// state, lifecycle events and outbox rows, all inside the caller's database transaction, so
/// they commit together or not at all. Notifications, purchases, receipts, restores, aliases
/// and the workers all end here.
/// - Note: Stateless; runs on the store's thread inside a write body.
public enum FactCommitter {
    public static func commit(_ batch: FactBatch, in transaction: any StoreTransaction) throws -> FactCommit {
        let now = batch.receivedAt
        if let line = batch.backfillLine {
            guard
                try transaction.recordBackfillLine(
                    appId: batch.appId, lineDigest: line.digest, appUserId: line.appUserId, at: now)
            else { return FactCommit(outcome: .duplicate, customerInfo: nil) }
        }
        var notificationRow: Int64?
        if var notification = batch.notification {
            // Stored as applied, as nearly every one ends; `finishNotification` below corrects
            // the others, in this same transaction.
            notification.presumed = NotificationProcessing(outcome: FactCommit.Outcome.applied.rawValue, at: now)
            guard case .inserted(let row) = try transaction.insertNotification(notification) else {
                return FactCommit(outcome: .duplicate, customerInfo: nil)
            }
            notificationRow = row
        }
        var playNotificationRow: Int64?
        if let notification = batch.playNotification {
            guard case .inserted(let row) = try transaction.insertPlayNotification(notification) else {
                return FactCommit(outcome: .duplicate, customerInfo: nil)
            }
            playNotificationRow = row
        }
        let outcome: FactCommit
        switch batch.ownership {
        case .existingOwner:
            try storeFacts(batch, customerId: nil, in: transaction)
            outcome = FactCommit(outcome: try applyToOwners(batch, in: transaction), customerInfo: nil)
        case .claim(let appUserId, let policy):
            let customer = try CustomerIdentity.resolve(
                appId: batch.appId, appUserId: appUserId, in: transaction, now: now)
            try storeFacts(batch, customerId: customer.id, in: transaction)
            outcome = FactCommit(
                outcome: .applied, customerInfo: try claim(batch, for: customer, policy: policy, in: transaction))
        case .merge(let appUserId, let alias):
            try storeFacts(batch, customerId: nil, in: transaction)
            outcome = FactCommit(
                outcome: .applied,
                customerInfo: try merge(batch, alias: alias, into: appUserId, in: transaction))
        case .completion(let appUserId):
            try storeFacts(batch, customerId: nil, in: transaction)
            try claimUnowned(batch, for: appUserId, in: transaction)
            outcome = FactCommit(outcome: try applyToOwners(batch, in: transaction), customerInfo: nil)
        }
        if let lease = batch.completesJob {
            guard try transaction.completeJob(id: lease.jobId, owner: lease.owner, at: now) else {
                // Another worker holds the job now (this lease expired): it applies the facts.
                throw IngestionError(
                    .conflict, "The job's lease was lost to another worker; its facts were not applied.")
            }
        }
        if let notificationRow {
            try transaction.finishNotification(id: notificationRow, outcome: outcome.outcome.rawValue, at: now)
        }
        if let playNotificationRow {
            try transaction.finishPlayNotification(id: playNotificationRow, outcome: outcome.outcome.rawValue, at: now)
        }
        return outcome
    }

    // MARK: Rows

    private static func storeFacts(_ batch: FactBatch, customerId: Int64?, in transaction: any StoreTransaction)
        throws
    {
        let now = batch.receivedAt
        if let customerId, case .claim = batch.ownership {
            for token in Set(batch.appAccountTokens).sorted() {
                do {
                    try transaction.addAppAccountToken(token, customerId: customerId, at: now)
                } catch let error as StoreError where error.code == .duplicate {
                    // The token already names another customer: the first link stands.
                }
            }
        }
        if let receipt = batch.receipt {
            _ = try transaction.insertReceiptValidation(
                NewReceiptValidation(
                    appId: batch.appId, customerId: customerId, environment: batch.environment,
                    receiptData: receipt.receiptData, responseBody: receipt.responseBody, receivedAt: now))
        }
        for fact in batch.transactions { _ = try transaction.insertTransaction(fact) }
        for fact in batch.renewals { _ = try transaction.insertRenewalInfo(fact) }
        for fact in batch.playFacts { _ = try transaction.insertPlayFact(fact) }
        for update in subscriptionWatch(batch) { try transaction.watchSubscription(update) }
        for job in batch.jobs {
            _ = try transaction.enqueueJob(
                appId: batch.appId, kind: job.kind, payload: job.payload, runAt: now, dedupeKey: job.dedupeKey,
                at: now)
        }
    }

    /// What the batch tells status polling (`subscription_watch`): the expiry of each
    /// auto-renewable transaction and the billing-retry flag of each renewal info, with the
    /// instant they arrived.
    static func subscriptionWatch(_ batch: FactBatch) -> [SubscriptionWatchUpdate] {
        var updates: [SubscriptionWatchUpdate] = []
        for row in batch.transactions {
            let fact = row.fact
            guard let expiresDate = fact.expiresDate, fact.productKind == nil || fact.productKind == .autoRenewable
            else { continue }
            updates.append(
                SubscriptionWatchUpdate(
                    appId: batch.appId, environment: fact.environment,
                    originalTransactionId: fact.originalTransactionId, expiresAt: expiresDate,
                    factAt: batch.receivedAt))
        }
        for row in batch.renewals {
            let fact = row.fact
            updates.append(
                SubscriptionWatchUpdate(
                    appId: batch.appId, environment: fact.environment,
                    originalTransactionId: fact.originalTransactionId, renewalSignedAt: fact.signedDate,
                    billingRetry: fact.isInBillingRetryPeriod, factAt: batch.receivedAt))
        }
        return merged(updates)
    }

    /// One update per subscription: what applying `updates` in turn leaves, since the upsert
    /// keeps the newest of each column (the latest expiry and arrival; the billing flag of the
    /// newest renewal info, the later one at equal instants). A notification's transaction and
    /// renewal info were two upserts of one row.
    static func merged(_ updates: [SubscriptionWatchUpdate]) -> [SubscriptionWatchUpdate] {
        struct Key: Hashable {
            var appId: String
            var environment: AppStoreEnvironment
            var originalTransactionId: String
        }
        var result: [SubscriptionWatchUpdate] = []
        var positions: [Key: Int] = [:]
        for update in updates {
            let key = Key(
                appId: update.appId, environment: update.environment,
                originalTransactionId: update.originalTransactionId)
            guard let position = positions[key] else {
                positions[key] = result.count
                result.append(update)
                continue
            }
            var into = result[position]
            if let expiresAt = update.expiresAt, into.expiresAt.map({ expiresAt > $0 }) ?? true {
                into.expiresAt = expiresAt
            }
            if let signedAt = update.renewalSignedAt, into.renewalSignedAt.map({ signedAt >= $0 }) ?? true {
                into.renewalSignedAt = signedAt
                into.billingRetry = update.billingRetry
            }
            into.factAt = max(into.factAt, update.factAt)
            result[position] = into
        }
        return result
    }

    // MARK: Ownership rules

    /// `existingOwner`: re-evaluates the owner (and sharers) of each original transaction.
    private static func applyToOwners(_ batch: FactBatch, in transaction: any StoreTransaction) throws
        -> FactCommit.Outcome
    {
        let originalIds = batch.originalTransactionIds
        guard !originalIds.isEmpty else { return .recorded }
        let environments = sorted(batch.environments)
        var outcome = FactCommit.Outcome.unclaimed
        var updated: Set<Int64> = []
        for originalId in originalIds {
            guard
                let owner = try CustomerIdentity.owner(
                    appId: batch.appId, originalTransactionId: originalId, appAccountTokens: batch.appAccountTokens,
                    in: transaction, now: batch.receivedAt)
                    ?? ownerOfReplacedToken(batch, token: originalId, in: transaction)
            else { continue }
            outcome = .applied
            guard updated.insert(owner.id).inserted else { continue }
            for environment in environments {
                try CustomerStateUpdater.update(
                    customer: owner, environment: environment, in: transaction, now: batch.receivedAt)
                try CustomerStateUpdater.updateSharers(
                    appId: batch.appId, originalTransactionId: originalId, environment: environment,
                    in: transaction, now: batch.receivedAt)
            }
        }
        return outcome
    }

    /// The owner of the Play token that `token` replaces (`linkedPurchaseToken`), who then owns
    /// `token` too: an upgrade or resubscription stays with its customer without a new claim.
    private static func ownerOfReplacedToken(
        _ batch: FactBatch, token: String, in transaction: any StoreTransaction
    ) throws -> CustomerRecord? {
        guard let replaced = batch.linkedPurchaseTokens[token],
            let owner = try transaction.customerId(appId: batch.appId, .originalTransactionId(replaced))
        else { return nil }
        let locked = try transaction.lockCustomer(id: owner)
        try transaction.claimOriginalTransaction(token, customerId: locked.id, at: batch.receivedAt)
        return try transaction.lockCustomer(id: locked.id)
    }

    /// `completion`: original transactions that no customer owns and no app account token of
    /// the batch links go to the customer known as `appUserId` (the one who posted the purchase).
    private static func claimUnowned(_ batch: FactBatch, for appUserId: String, in transaction: any StoreTransaction)
        throws
    {
        var poster: CustomerRecord?
        for originalId in batch.originalTransactionIds {
            guard try transaction.customerId(appId: batch.appId, .originalTransactionId(originalId)) == nil else {
                continue
            }
            let linked = try batch.appAccountTokens.contains {
                try transaction.customerId(appId: batch.appId, .appAccountToken($0)) != nil
            }
            if linked { continue }
            let customer =
                try poster
                ?? CustomerIdentity.resolve(
                    appId: batch.appId, appUserId: appUserId, in: transaction, now: batch.receivedAt)
            poster = customer
            try transaction.claimOriginalTransaction(originalId, customerId: customer.id, at: batch.receivedAt)
        }
    }

    /// `claim`: the customer claims every original transaction under `policy`; customers that
    /// lose one are re-evaluated too, and the receiver of a transfer gets a TRANSFER event.
    private static func claim(
        _ batch: FactBatch, for customer: CustomerRecord, policy: TransferPolicy, in transaction: any StoreTransaction
    ) throws -> CustomerInfo {
        let now = batch.receivedAt
        var others: [Int64: CustomerRecord] = [:]
        var transfers: [LifecycleEvent] = []
        for originalTransactionId in batch.originalTransactionIds {
            switch try CustomerIdentity.claim(
                originalTransactionId, for: customer, policy: policy, in: transaction, now: now)
            {
            case .transferred(let previous):
                others[previous.id] = previous
                let fact = batch.transactions.first { $0.fact.originalTransactionId == originalTransactionId }?.fact
                transfers.append(
                    CustomerIdentity.transferEvent(
                        originalTransactionId,
                        productId: fact?.productId ?? batch.playProductId(of: originalTransactionId),
                        environment: fact?.environment ?? batch.environment, from: previous, to: customer,
                        catalog: try transaction.catalog(appId: batch.appId), at: now))
            case .claimed, .alreadyOwned, .keptBy, .shared: break
            }
        }
        if !transfers.isEmpty {
            let appended = try transaction.appendEvents(transfers, customerId: customer.id, at: now)
            try transaction.enqueueDeliveries(of: appended, appId: batch.appId, at: now)
        }
        let environments = sorted(
            Set(batch.transactions.map(\.fact.environment)).union(batch.playFacts.map(\.fact.environment)).union([
                batch.environment
            ]))
        let current = try transaction.lockCustomer(id: customer.id)
        var result: CustomerInfo?
        for environment in environments {
            let outcome = try CustomerStateUpdater.update(
                customer: current, environment: environment, in: transaction, now: now)
            if environment == batch.environment { result = outcome.info }
        }
        for previous in others.values.sorted(by: { $0.id < $1.id }) {
            let locked = try transaction.lockCustomer(id: previous.id)
            for environment in environments {
                try CustomerStateUpdater.update(customer: locked, environment: environment, in: transaction, now: now)
            }
        }
        return result ?? CustomerInfo(customerId: customer.appUserId, environment: batch.environment, evaluatedAt: now)
    }

    /// `merge`: the customer named `alias` hands its purchases to `appUserId` and becomes its alias.
    private static func merge(
        _ batch: FactBatch, alias: String, into appUserId: String, in transaction: any StoreTransaction
    ) throws -> CustomerInfo {
        let now = batch.receivedAt
        let target = try CustomerIdentity.resolve(appId: batch.appId, appUserId: appUserId, in: transaction, now: now)
        var environments = batch.environments
        if let other = try transaction.customerId(appId: batch.appId, .appUserId(alias)), other != target.id {
            let locked = try transaction.lockCustomer(id: other)
            environments.formUnion(try transaction.facts(customerId: locked.id).map(\.environment))
            for originalTransactionId in locked.originalTransactionIds {
                try transaction.claimOriginalTransaction(originalTransactionId, customerId: target.id, at: now)
            }
            for environment in sorted(environments) {
                try CustomerStateUpdater.update(customer: locked, environment: environment, in: transaction, now: now)
            }
        }
        try transaction.addAlias(alias, customerId: target.id, at: now)
        try transaction.appendAudit(
            NewAuditEntry(
                at: now, actor: "api", action: "customer.alias", appId: batch.appId,
                detail: .object(["appUserId": .string(appUserId), "alias": .string(alias)])))
        let current = try transaction.lockCustomer(id: target.id)
        var result: CustomerInfo?
        for environment in sorted(environments) {
            let outcome = try CustomerStateUpdater.update(
                customer: current, environment: environment, in: transaction, now: now)
            if environment == batch.environment { result = outcome.info }
        }
        return result ?? CustomerInfo(customerId: target.appUserId, environment: batch.environment, evaluatedAt: now)
    }

    /// Environments in a fixed order (`allCases`), so every path evaluates alike.
    private static func sorted(_ environments: Set<AppStoreEnvironment>) -> [AppStoreEnvironment] {
        AppStoreEnvironment.allCases.filter(environments.contains)
    }
}
