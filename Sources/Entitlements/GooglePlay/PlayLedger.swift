import AppStoreModels

/// A customer's Google Play facts of one environment, deduplicated and in canonical order:
/// the snapshots of each token oldest read first, ties by canonical JSON, so the last one is
/// the latest read whatever the arrival order.
struct PlayLedger {
    var subscriptionsByToken: [String: [PlaySubscriptionFact]] = [:]
    var productsByToken: [String: [PlayProductPurchaseFact]] = [:]
    var voidedByToken: [String: [PlayVoidedPurchaseFact]] = [:]
    /// Orders read from the orders API, the latest read of each (ties by canonical JSON).
    var ordersById: [String: PlayOrderFact] = [:]

    init(
        subscriptions: Set<PlaySubscriptionFact> = [], products: Set<PlayProductPurchaseFact> = [],
        voided: Set<PlayVoidedPurchaseFact> = [], orders: Set<PlayOrderFact> = []
    ) {
        for order in orders {
            if let kept = ordersById[order.orderId],
                kept.readAt > order.readAt
                    || (kept.readAt == order.readAt && !FactLedger.canonicalPrecedes(kept, order))
            {
                continue
            }
            ordersById[order.orderId] = order
        }
        for fact in subscriptions { subscriptionsByToken[fact.purchaseToken, default: []].append(fact) }
        for (token, facts) in subscriptionsByToken {
            subscriptionsByToken[token] = facts.sorted { lhs, rhs in
                lhs.readAt != rhs.readAt ? lhs.readAt < rhs.readAt : FactLedger.canonicalPrecedes(lhs, rhs)
            }
        }
        for fact in products { productsByToken[fact.purchaseToken, default: []].append(fact) }
        for (token, facts) in productsByToken {
            productsByToken[token] = facts.sorted { lhs, rhs in
                lhs.readAt != rhs.readAt ? lhs.readAt < rhs.readAt : FactLedger.canonicalPrecedes(lhs, rhs)
            }
        }
        for fact in voided { voidedByToken[fact.purchaseToken, default: []].append(fact) }
        for (token, facts) in voidedByToken {
            voidedByToken[token] = facts.sorted { lhs, rhs in
                lhs.voidedAt != rhs.voidedAt ? lhs.voidedAt < rhs.voidedAt : FactLedger.canonicalPrecedes(lhs, rhs)
            }
        }
    }

    /// Orders alone grant and earn nothing: they only refine the revenue of reads.
    var isEmpty: Bool { subscriptionsByToken.isEmpty && productsByToken.isEmpty && voidedByToken.isEmpty }
}
