import AppStoreModels

/// Non-renewing subscriptions, non-consumables and consumables.
///
/// Non-renewing purchases of one product stack: each adds the catalog duration after the end
/// of the service already bought (refunded or revoked purchases drop out of the stack).
/// Non-consumables last forever unless revoked. Consumables are recorded, bring revenue and
/// events, and never grant or restore anything.
struct OneTimePurchases {
    private(set) var purchases: [NonSubscriptionPurchase] = []
    private(set) var events: [LifecycleEvent] = []
    private(set) var notes: [String] = []

    init(
        transactions: [TransactionFact], kinds: [String: ProductKind], now: Timestamp, catalog: ProductCatalog,
        builder: LifecycleEventBuilder, versions: [String: [TransactionFact]]
    ) {
        var stackEndByProduct: [String: Timestamp] = [:]
        var runStartByProduct: [String: Timestamp] = [:]
        for transaction in transactions {
            let kind = kinds[transaction.transactionId]!
            let revocation = transaction.revocation
            var purchase = NonSubscriptionPurchase(
                productId: transaction.productId, kind: kind, transactionId: transaction.transactionId,
                originalTransactionId: transaction.originalTransactionId, purchaseDate: transaction.purchaseDate,
                originalPurchaseDate: transaction.originalPurchaseDate, serviceStartsDate: nil, expiresDate: nil,
                isActive: false, isRestorable: kind != .consumable && revocation == nil, quantity: transaction.quantity,
                ownership: transaction.ownership, environment: transaction.environment, price: nil,
                revocation: revocation, reason: "")
            let eventType: LifecycleEventType
            switch kind {
            case .nonRenewing:
                eventType = .nonRenewingPurchase
                if let duration = catalog[transaction.productId]?.duration {
                    let previousEnd = stackEndByProduct[transaction.productId]
                    let start = max(transaction.purchaseDate, previousEnd ?? transaction.purchaseDate)
                    let end = duration.end(from: start)
                    purchase.serviceStartsDate = start
                    purchase.expiresDate = end
                    if let revocation {
                        purchase.isActive = now < min(revocation.revokedAt, end) && now >= start
                        purchase.reason = revocation.text
                    } else {
                        // Contiguous stacked purchases form one run of service; a purchase bought
                        // ahead is part of the access the customer has now.
                        let runStart = start == previousEnd ? runStartByProduct[transaction.productId] ?? start : start
                        runStartByProduct[transaction.productId] = runStart
                        stackEndByProduct[transaction.productId] = end
                        purchase.isActive = now >= runStart && now < end
                        purchase.reason =
                            now < end
                            ? "\(duration.iso8601) of service from \(start.humanReadable) until \(end.humanReadable)"
                            : "expired \(end.humanReadable) (non-renewing, \(duration.iso8601))"
                    }
                } else {
                    purchase.reason = "no duration for \(transaction.productId) in the catalog: grants nothing"
                    notes.append("non-renewing product \(transaction.productId) has no duration in the catalog")
                }
            case .nonConsumable:
                eventType = .nonConsumablePurchase
                if let revocation {
                    purchase.isActive = now < revocation.revokedAt
                    purchase.reason = revocation.text
                } else {
                    purchase.isActive = true
                    purchase.reason = "lifetime: purchased \(transaction.purchaseDate.humanReadable)"
                }
            case .consumable:
                eventType = .consumablePurchase
                purchase.reason = revocation?.text ?? "consumable: recorded, never restorable"
            case .autoRenewable:
                preconditionFailure("auto-renewable transactions are read as subscription chains")
            }
            if transaction.ownership == .familyShared && revocation == nil {
                purchase.reason += " (through Family Sharing)"
            }
            purchases.append(purchase)
            events.append(
                builder.event(
                    eventType, key: transaction.transactionId, at: transaction.purchaseDate, transaction: transaction,
                    money: .charged, summary: "bought \(transaction.productId)"))
            events += builder.versionEvents(versions[transaction.transactionId] ?? [transaction])
        }
    }
}
