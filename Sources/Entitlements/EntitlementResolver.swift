import AppStoreModels

/// Chooses, for each entitlement id, the product that grants it.
///
/// Among active grants the one with the furthest expiry wins (lifetime beats any date), from
/// either store: access lasts as long as the longest grant, so that grant is the one whose
/// dates and store the entitlement shows, and it stays active until every grant has ended.
/// Ties go to a purchase over Family Sharing, then to the App Store, then by product and
/// transaction id so the choice is stable. With no active grant, the most recently ended one explains why access is gone.
struct EntitlementResolver {
    struct Grant {
        var productId: String
        var isActive: Bool
        var expiresDate: Timestamp?
        var transactionId: String
        var originalTransactionId: String
        var purchaseDate: Timestamp
        var originalPurchaseDate: Timestamp?
        var periodType: PeriodType
        var willRenew: Bool
        var unsubscribeDetectedAt: Timestamp?
        var billingIssueDetectedAt: Timestamp?
        var gracePeriodExpiresDate: Timestamp?
        var ownership: Ownership
        var reason: String
        /// When access ended or ends, for ordering inactive grants (`nil` = never).
        var accessEnd: Timestamp?
        var store: Marketplace = .appStore
    }

    static func resolve(
        grants: [Grant], catalog: ProductCatalog, environment: AppStoreEnvironment
    ) -> [String: EntitlementInfo] {
        var grantsByEntitlement: [String: [Grant]] = [:]
        for grant in grants {
            guard let product = catalog[grant.productId], product.kind != .consumable else { continue }
            for entitlementId in Set(product.entitlementIds) {
                grantsByEntitlement[entitlementId, default: []].append(grant)
            }
        }
        var entitlements: [String: EntitlementInfo] = [:]
        for (entitlementId, candidates) in grantsByEntitlement {
            let active = candidates.filter(\.isActive)
            let chosen = active.isEmpty ? candidates.max(by: endedEarlier)! : active.max(by: expiresEarlier)!
            let reason =
                chosen.isActive
                ? "active: granted by \(chosen.productId), \(chosen.reason)"
                : "inactive: \(chosen.productId) \(chosen.reason)"
            entitlements[entitlementId] = EntitlementInfo(
                entitlementId: entitlementId, isActive: chosen.isActive, expiresDate: chosen.expiresDate,
                productId: chosen.productId, transactionId: chosen.transactionId,
                originalTransactionId: chosen.originalTransactionId, purchaseDate: chosen.purchaseDate,
                originalPurchaseDate: chosen.originalPurchaseDate, periodType: chosen.periodType,
                willRenew: chosen.willRenew, unsubscribeDetectedAt: chosen.unsubscribeDetectedAt,
                billingIssueDetectedAt: chosen.billingIssueDetectedAt,
                gracePeriodExpiresDate: chosen.gracePeriodExpiresDate, ownership: chosen.ownership,
                environment: environment, reason: reason)
            entitlements[entitlementId]?.store = chosen.store.encoded
        }
        return entitlements
    }

    /// `lhs` ranks below `rhs` as an active grantor.
    private static func expiresEarlier(_ lhs: Grant, _ rhs: Grant) -> Bool {
        switch (lhs.expiresDate, rhs.expiresDate) {
        case (nil, .some): return false
        case (.some, nil): return true
        case (.some(let l), .some(let r)) where l != r: return l < r
        default: return tieBreak(lhs, rhs)
        }
    }

    /// `lhs` ranks below `rhs` as the explanation of a lost entitlement.
    private static func endedEarlier(_ lhs: Grant, _ rhs: Grant) -> Bool {
        let l = lhs.accessEnd ?? Timestamp(millisecondsSince1970: .max)
        let r = rhs.accessEnd ?? Timestamp(millisecondsSince1970: .max)
        if l != r { return l < r }
        if lhs.purchaseDate != rhs.purchaseDate { return lhs.purchaseDate < rhs.purchaseDate }
        return tieBreak(lhs, rhs)
    }

    private static func tieBreak(_ lhs: Grant, _ rhs: Grant) -> Bool {
        if lhs.ownership != rhs.ownership { return lhs.ownership == .familyShared }
        // Equal ends in both stores: the App Store grant is shown (either is as good; one
        // fixed rule keeps the answer stable).
        if lhs.store != rhs.store { return lhs.store == .playStore }
        if lhs.productId != rhs.productId { return lhs.productId > rhs.productId }
        return lhs.transactionId > rhs.transactionId
    }
}
