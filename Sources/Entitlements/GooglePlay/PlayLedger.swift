import AppStoreModels

/// A customer's Google Play facts of one environment, deduplicated and in canonical order:
/// the snapshots of each token oldest read first, ties by canonical JSON, so the last one is
/// the latest read whatever the arrival order.
struct PlayLedger {
    var subscriptionsByToken: [String: [PlaySubscriptionFact]] = [:]
    var productsByToken: [String: [PlayProductPurchaseFact]] = [:]
    var voidedByToken: [String: [PlayVoidedPurchaseFact]] = [:]

    init(
        subscriptions: Set<PlaySubscriptionFact> = [], products: Set<PlayProductPurchaseFact> = [],
        voided: Set<PlayVoidedPurchaseFact> = []
    ) {
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

    var isEmpty: Bool { subscriptionsByToken.isEmpty && productsByToken.isEmpty && voidedByToken.isEmpty }
}
