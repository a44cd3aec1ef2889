import AppStoreModels

/// The result of one evaluation: the customer's state and the events it implies.
/// - Note: Immutable value; `Sendable`.
public struct EntitlementEvaluation: Sendable, Hashable, Codable {
    public var customerInfo: CustomerInfo
    /// Events whose ids the previous state did not list, chronological: what to publish now.
    public var newEvents: [LifecycleEvent]
    /// Every event the facts imply at `now`, chronological.
    public var allEvents: [LifecycleEvent]
    /// Ids the previous state listed that these facts no longer imply, sorted: an event reported
    /// from part of the facts that a late fact showed never happened (an expiry a late renewal
    /// covered, an auto-renew change a late older snapshot dates earlier). The store keeps such
    /// an event, marks it retracted and reports an `EVENT_RETRACTED` for it. Only events of
    /// transactions the customer still holds: facts moved to another customer (an alias merge,
    /// a transfer) happened while this customer held them.
    public var retractedEventIds: [String] = []
}

/// Facts in, customer state and lifecycle events out: pure and deterministic.
///
/// No I/O, no clock: `now` is an argument. The same set of facts gives the same result in
/// any order and with any duplication, because facts are first put in a canonical ledger
/// (latest `signedDate` per transaction wins; every version is kept as history) and every
/// decision reads Apple's dates, never arrival order.
/// - Note: Stateless; safe to call from any thread.
public enum EntitlementEngine {
    /// Evaluates one customer in one environment. Facts of another environment are set aside
    /// (listed in `notes`); `previous` (the state stored after the last evaluation) only decides
    /// which events are new.
    public static func evaluate(
        customerId: String, environment: AppStoreEnvironment, facts: [Fact], catalog: ProductCatalog,
        now: Timestamp, previous: CustomerInfo? = nil, playCommission: PlayCommissionRule = PlayCommissionRule()
    ) -> EntitlementEvaluation {
        evaluate(
            customerId: customerId, environment: environment, facts: facts, catalog: catalog, now: now,
            previousEvaluation: previous.map(PreviousEvaluation.init), playCommission: playCommission)
    }

    /// The same, given only what is read of the previous state.
    public static func evaluate(
        customerId: String, environment: AppStoreEnvironment, facts: [Fact], catalog: ProductCatalog,
        now: Timestamp, previousEvaluation previous: PreviousEvaluation?,
        playCommission: PlayCommissionRule = PlayCommissionRule()
    ) -> EntitlementEvaluation {
        let ledger = FactLedger(facts: facts, environment: environment)
        var notes = ledger.notes

        var kinds: [String: ProductKind] = [:]
        kinds.reserveCapacity(ledger.transactions.count)
        var chainTransactions: [String: [TransactionFact]] = [:]
        var oneTime: [TransactionFact] = []
        for transaction in ledger.transactions {
            let kind: ProductKind
            if let product = catalog[transaction.productId] {
                kind = product.kind
            } else {
                kind = transaction.productKind ?? .nonConsumable
                notes.append("product \(transaction.productId) is not in the catalog: recorded, grants nothing")
            }
            kinds[transaction.transactionId] = kind
            if kind == .autoRenewable {
                chainTransactions[transaction.originalTransactionId, default: []].append(transaction)
            } else {
                oneTime.append(transaction)
            }
        }
        for originalTransactionId in ledger.renewalsByOriginalTransactionId.keys
        where chainTransactions[originalTransactionId] == nil {
            notes.append("renewal info for \(originalTransactionId) has no transaction yet: waiting for it")
        }

        let chains = chainTransactions.keys.sorted().map { originalTransactionId in
            SubscriptionChain(
                originalTransactionId: originalTransactionId, transactions: chainTransactions[originalTransactionId]!,
                snapshots: ledger.renewalsByOriginalTransactionId[originalTransactionId] ?? [],
                notifications: ledger.notificationsByOriginalTransactionId[originalTransactionId] ?? [],
                catalog: catalog)
        }
        let revenue = RevenueLedger(
            transactions: ledger.transactions,
            accruedBefore: PaidServiceAccrual.accruedBefore(chains: chains, catalog: catalog),
            catalog: catalog)
        let builder = LifecycleEventBuilder(
            customerId: customerId, environment: environment, catalog: catalog, revenue: revenue,
            productIds: Set(ledger.transactions.map(\.productId)))

        var events: [LifecycleEvent] = []
        var reasonUpdates: [LifecycleEvent] = []
        var grants: [EntitlementResolver.Grant] = []
        var subscriptions: [String: SubscriptionInfo] = [:]
        for chain in chains {
            let result = chain.evaluate(now: now, builder: builder, versions: ledger.versionsByTransactionId)
            events += result.events
            reasonUpdates += result.reasonUpdates
            for (var subscription, accessEnd) in result.subscriptions {
                subscription.price = revenue[subscription.transactionId]?.price
                if catalog[subscription.productId] == nil { subscription.isUnknownProduct = true }
                grants.append(grant(subscription, accessEnd: accessEnd))
                if let kept = subscriptions[subscription.productId], !ranksBelow(kept, subscription) { continue }
                subscriptions[subscription.productId] = subscription
            }
        }

        let purchases = OneTimePurchases(
            transactions: oneTime, kinds: kinds, now: now, catalog: catalog, builder: builder,
            versions: ledger.versionsByTransactionId)
        events += purchases.events
        notes += purchases.notes
        var nonSubscriptionPurchases: [NonSubscriptionPurchase] = []
        for var purchase in purchases.purchases {
            purchase.price = revenue[purchase.transactionId]?.price
            if catalog[purchase.productId] == nil { purchase.isUnknownProduct = true }
            nonSubscriptionPurchases.append(purchase)
            if purchase.kind == .nonConsumable || (purchase.kind == .nonRenewing && purchase.expiresDate != nil) {
                grants.append(grant(purchase))
            }
        }

        // Google Play: the same outputs from the latest read of each token (`PlaySubscriptions`).
        var playRevenue: [TransactionRevenue] = []
        var playCauses: Set<String> = []
        if !ledger.play.isEmpty {
            let playSubscriptions = PlaySubscriptions(
                ledger: ledger.play, now: now, catalog: catalog, builder: builder, rule: playCommission)
            let playProducts = PlayProductPurchases(
                ledger: ledger.play, now: now, catalog: catalog, builder: builder, rule: playCommission)
            events += playSubscriptions.events + playProducts.events
            notes += playSubscriptions.notes + playProducts.notes
            playRevenue = playSubscriptions.revenue + playProducts.revenue
            playCauses = playSubscriptions.causeIds.union(playProducts.causeIds)
            for (subscription, accessEnd) in playSubscriptions.subscriptions {
                var played = grant(subscription, accessEnd: accessEnd)
                played.store = .playStore
                grants.append(played)
                // A product id the App Store also sold this customer keeps its App Store entry
                // under the plain id (App Store output is unchanged) and this one beside it: one
                // key for both hid one of the two subscriptions.
                var key = subscription.productId
                if let other = subscriptions[key], other.store != .playStore { key = Self.playSubscriptionKey(key) }
                if let kept = subscriptions[key], !ranksBelow(kept, subscription) { continue }
                subscriptions[key] = subscription
            }
            for purchase in playProducts.purchases {
                nonSubscriptionPurchases.append(purchase)
                // Pending and canceled purchases never granted: they explain nothing.
                if purchase.isRestorable || purchase.revocation != nil,
                    purchase.kind == .nonConsumable || (purchase.kind == .nonRenewing && purchase.expiresDate != nil)
                {
                    var played = grant(purchase)
                    played.store = .playStore
                    grants.append(played)
                }
            }
            nonSubscriptionPurchases = nonSubscriptionPurchases.indices.sorted { left, right in
                let lhs = nonSubscriptionPurchases[left]
                let rhs = nonSubscriptionPurchases[right]
                if lhs.purchaseDate != rhs.purchaseDate { return lhs.purchaseDate < rhs.purchaseDate }
                if lhs.transactionId != rhs.transactionId { return lhs.transactionId < rhs.transactionId }
                return left < right
            }.map { nonSubscriptionPurchases[$0] }
        }

        // One event per id, the first listed: a cause is reported once even when two facts
        // describe it. Positions are kept and sorted, not the events: moving large values
        // dominated both steps. Ids are unique then, so `chronological` is a total order.
        var seenIds = Set<String>(minimumCapacity: events.count)
        let unique = events.indices.filter { seenIds.insert(events[$0].id).inserted }
        let allEvents = unique.sorted { LifecycleEvent.chronological(events[$0], events[$1]) }.map { events[$0] }
        let previousList =
            previous.map { $0.customerId == customerId && $0.environment == environment ? $0.eventIds : [] } ?? []
        let previousIds = Set(previousList)
        let corrections = reasonCorrections(reasonUpdates, previousIds: previousIds)

        let info = CustomerInfo(
            customerId: customerId, environment: environment, evaluatedAt: now,
            entitlements: EntitlementResolver.resolve(grants: grants, catalog: catalog, environment: environment),
            subscriptions: subscriptions,
            nonSubscriptionPurchases: nonSubscriptionPurchases,
            introOfferEligibility: IntroOfferRule.eligibility(
                transactions: ledger.transactions, kinds: kinds, catalog: catalog),
            revenue: Self.byPurchase(ledger.transactions.compactMap { revenue[$0.transactionId] } + playRevenue),
            eventIds: (allEvents.map(\.id) + reasonUpdates.map(\.id)).sorted(),
            notes: Array(Set(notes)).sorted())
        var newEvents = allEvents.filter { !previousIds.contains($0.id) }
        if !corrections.isEmpty {
            newEvents = (newEvents + corrections).sorted(by: LifecycleEvent.chronological)
        }
        return EntitlementEvaluation(
            customerInfo: info, newEvents: newEvents, allEvents: allEvents,
            retractedEventIds: retracted(
                previousIds: previousList, implied: info.eventIds,
                transactionIds: { Set(ledger.transactions.map(\.transactionId)).union(playCauses) }))
    }

    /// The previously listed event ids the facts no longer imply (`implied` sorted, as
    /// `CustomerInfo.eventIds` is), among events of transactions
    /// still held (`transactionIds`, worked out only when some id is gone). Reason markers are
    /// not events and never retracted; an id whose cause is not a held transaction (a legacy id,
    /// a purchase that moved) is left alone.
    static func retracted(previousIds: [String], implied: [String], transactionIds: () -> Set<String>)
        -> [String]
    {
        let markers = LifecycleEventType.expirationReasonUpdated.rawValue + "/"
        let gone = sortedDifference(previousIds, implied)
        guard !gone.isEmpty else { return [] }
        let held = transactionIds()
        return gone.filter { id in
            guard !id.hasPrefix(markers) else { return false }
            let parts = id.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
            return parts.count >= 2 && held.contains(String(parts[1]))
        }
    }

    /// The distinct elements of `lhs` that `rhs` lacks, sorted; `rhs` must be sorted (unchecked:
    /// the one caller passes `CustomerInfo.eventIds`, sorted as it is made). One walk over both
    /// when `lhs` is sorted, as every stored list of event ids is; hashing both lists cost more
    /// than the rest of this step for a long history.
    static func sortedDifference(_ lhs: [String], _ rhs: [String]) -> [String] {
        let left = zip(lhs, lhs.dropFirst()).allSatisfy { $0 <= $1 } ? lhs : lhs.sorted()
        var result: [String] = []
        var next = rhs.startIndex
        for (position, id) in left.enumerated() where position == 0 || left[position - 1] != id {
            while next < rhs.endIndex, rhs[next] < id { next += 1 }
            if next == rhs.endIndex || rhs[next] != id { result.append(id) }
        }
        return result
    }

    /// The reason updates to report now. Every evaluation lists the current reason of each
    /// expiration among `eventIds` (`EXPIRATION_REASON_UPDATED/<transaction>/<reason>`), so the next
    /// one knows which reason was reported. An update is reported only when its expiration was
    /// reported before with another reason: a new expiration carries its reason itself, and a
    /// state saved before these markers existed adopts the current reason silently.
    private static func reasonCorrections(_ updates: [LifecycleEvent], previousIds: Set<String>) -> [LifecycleEvent] {
        guard !previousIds.isEmpty else { return [] }
        let prefix = LifecycleEventType.expirationReasonUpdated.rawValue + "/"
        return updates.filter { update in
            guard !previousIds.contains(update.id), let transactionId = update.transactionId,
                previousIds.contains("\(LifecycleEventType.expiration.rawValue)/\(transactionId)")
            else { return false }
            let earlier = prefix + transactionId + "/"
            return previousIds.contains { $0.hasPrefix(earlier) }
        }
    }

    /// Revenue entries by purchase date, then transaction id; App Store entries alone are
    /// already in this order, so their output is unchanged.
    private static func byPurchase(_ entries: [TransactionRevenue]) -> [TransactionRevenue] {
        let inOrder = zip(entries, entries.dropFirst()).allSatisfy { lhs, rhs in
            lhs.purchaseDate != rhs.purchaseDate
                ? lhs.purchaseDate < rhs.purchaseDate : lhs.transactionId < rhs.transactionId
        }
        if inOrder { return entries }
        return entries.indices.sorted { left, right in
            let lhs = entries[left]
            let rhs = entries[right]
            if lhs.purchaseDate != rhs.purchaseDate { return lhs.purchaseDate < rhs.purchaseDate }
            if lhs.transactionId != rhs.transactionId { return lhs.transactionId < rhs.transactionId }
            return left < right
        }.map { entries[$0] }
    }

    /// Which of two subscriptions of the same product (bought and family-shared, say) the
    /// customer's `subscriptions` shows: the one giving access, then the later one.
    /// The `subscriptions` key of a Google Play subscription whose product id the App Store
    /// side of the same customer also holds: `play_store:<productId>`.
    public static func playSubscriptionKey(_ productId: String) -> String {
        "play_store:" + productId
    }

    private static func ranksBelow(_ lhs: SubscriptionInfo, _ rhs: SubscriptionInfo) -> Bool {
        if lhs.isActive != rhs.isActive { return rhs.isActive }
        let l = lhs.expiresDate ?? lhs.purchaseDate
        let r = rhs.expiresDate ?? rhs.purchaseDate
        if l != r { return l < r }
        if lhs.ownership != rhs.ownership { return lhs.ownership == .familyShared }
        return lhs.transactionId < rhs.transactionId
    }

    private static func grant(_ subscription: SubscriptionInfo, accessEnd end: Timestamp) -> EntitlementResolver.Grant {
        return EntitlementResolver.Grant(
            productId: subscription.productId, isActive: subscription.isActive, expiresDate: end,
            transactionId: subscription.transactionId, originalTransactionId: subscription.originalTransactionId,
            purchaseDate: subscription.purchaseDate, originalPurchaseDate: subscription.originalPurchaseDate,
            periodType: subscription.periodType, willRenew: subscription.willRenew,
            unsubscribeDetectedAt: subscription.unsubscribeDetectedAt,
            billingIssueDetectedAt: subscription.billingIssueDetectedAt,
            gracePeriodExpiresDate: subscription.gracePeriodExpiresDate, ownership: subscription.ownership,
            reason: subscription.reason, accessEnd: end)
    }

    private static func grant(_ purchase: NonSubscriptionPurchase) -> EntitlementResolver.Grant {
        var end = purchase.expiresDate
        if let revokedAt = purchase.revocation?.revokedAt { end = min(end ?? revokedAt, revokedAt) }
        return EntitlementResolver.Grant(
            productId: purchase.productId, isActive: purchase.isActive, expiresDate: end,
            transactionId: purchase.transactionId, originalTransactionId: purchase.originalTransactionId,
            purchaseDate: purchase.purchaseDate, originalPurchaseDate: purchase.originalPurchaseDate,
            periodType: .normal, willRenew: false, unsubscribeDetectedAt: nil, billingIssueDetectedAt: nil,
            gracePeriodExpiresDate: nil, ownership: purchase.ownership, reason: purchase.reason, accessEnd: end)
    }
}
