import AppStoreModels

/// Google Play one-time products in the engine's terms: the latest read of each purchase
/// token decides. A purchased non-consumable grants for life, a non-renewing product for its
/// catalog duration from the purchase, a consumable is recorded only; a pending purchase
/// grants nothing yet, a canceled one nothing any more. A full refund ends access at the
/// voided time; a quantity-based partial refund takes back its share of the money only.
/// Money and the purchase event only for a purchase that was charged
/// (`PlayProductPurchaseFact.wasCharged`): a pending purchase canceled before payment was not.
struct PlayProductPurchases {
    private(set) var purchases: [NonSubscriptionPurchase] = []
    private(set) var events: [LifecycleEvent] = []
    private(set) var revenue: [TransactionRevenue] = []
    private(set) var notes: [String] = []
    private(set) var causeIds: Set<String> = []

    init(
        ledger: PlayLedger, now: Timestamp, catalog: ProductCatalog, builder: LifecycleEventBuilder,
        rule: PlayCommissionRule
    ) {
        for token in ledger.productsByToken.keys.sorted() {
            let reads = ledger.productsByToken[token]!
            let latest = reads.last!
            let key = latest.orderId ?? token
            // A voided record naming another order than the purchase's is kept but refunds
            // nothing here (a token has one order; the record is Google's to explain).
            var voided: [PlayVoidedPurchaseFact] = []
            for fact in (ledger.voidedByToken[token] ?? []) where fact.applies(to: .oneTime) {
                if let orderId = fact.orderId, let own = latest.orderId, orderId != own {
                    notes.append(PlaySubscriptions.unknownOrderNote(fact, orderId: orderId))
                } else {
                    voided.append(fact)
                }
            }
            causeIds.insert(key)
            var kind = catalog[latest.productId]?.kind ?? .nonConsumable
            if catalog[latest.productId] == nil {
                notes.append("product \(latest.productId) is not in the catalog: recorded, grants nothing")
            } else if kind == .autoRenewable {
                notes.append(
                    "one-time purchase of \(latest.productId), a subscription in the catalog: read as lifetime")
                kind = .nonConsumable
            }
            let state = latest.purchaseState.value
            let refunds = PlayOrderRefunds(voided: voided, quantity: latest.quantity) { _ in key }
            let refundShare = refunds.shares[key]
            let figures = PlayRevenue.figures(
                orderId: key, productId: latest.productId, purchaseDate: latest.purchaseTime,
                shownPrice: latest.price, quantity: latest.quantity, isAutoRenewing: false, isTrial: false,
                isPaid: latest.isPaid, refundShare: refundShare, catalog: catalog, rule: rule,
                order: latest.orderId.flatMap { ledger.ordersById[$0] })
            let fullVoid = voided.first(where: \.isFull)
            let revocation = fullVoid.map {
                Revocation(kind: .refund, revokedAt: $0.voidedAt, refundReason: $0.refundReason, refundPercentage: nil)
            }
            var purchase = NonSubscriptionPurchase(
                productId: latest.productId, kind: kind, transactionId: key, originalTransactionId: token,
                purchaseDate: latest.purchaseTime, originalPurchaseDate: nil, serviceStartsDate: nil, expiresDate: nil,
                isActive: false, isRestorable: kind != .consumable && revocation == nil && state == .purchased,
                quantity: latest.quantity, ownership: .purchased, environment: latest.environment,
                price: nil, revocation: revocation, reason: "")
            purchase.store = .playStore
            if catalog[latest.productId] == nil { purchase.isUnknownProduct = true }
            let eventType: LifecycleEventType
            switch kind {
            case .nonRenewing: eventType = .nonRenewingPurchase
            case .consumable: eventType = .consumablePurchase
            default: eventType = .nonConsumablePurchase
            }
            switch state {
            case .purchased?:
                if kind == .nonRenewing {
                    if let duration = catalog[latest.productId]?.duration {
                        let end = duration.end(from: latest.purchaseTime)
                        purchase.serviceStartsDate = latest.purchaseTime
                        purchase.expiresDate = end
                        purchase.isActive = now < min(end, revocation?.revokedAt ?? end)
                        purchase.reason =
                            now < end
                            ? "\(duration.iso8601) of service until \(end.humanReadable)"
                            : "expired \(end.humanReadable) (non-renewing, \(duration.iso8601))"
                    } else {
                        purchase.reason = "no duration for \(latest.productId) in the catalog: grants nothing"
                    }
                } else if kind == .consumable {
                    purchase.reason = "consumable: recorded, never restorable"
                } else {
                    purchase.isActive = revocation.map { now < $0.revokedAt } ?? true
                    purchase.reason = "lifetime: purchased \(latest.purchaseTime.humanReadable) on Google Play"
                }
                if let revocation { purchase.reason = revocation.text }
            case .canceled?:
                purchase.reason =
                    revocation?.text
                    ?? (PlayProductPurchaseFact.wasCharged(reads: reads, voided: voided)
                        ? "canceled on Google Play: grants nothing"
                        : "canceled on Google Play before it was paid: grants nothing, no revenue")
            case .pending?:
                purchase.reason = "payment pending: no access until Google Play confirms it"
            case nil:
                purchase.reason = "unknown purchase state \(latest.purchaseState.rawValue): grants nothing"
            }
            purchase.price = figures.price
            purchases.append(purchase)
            guard PlayProductPurchaseFact.wasCharged(reads: reads, voided: voided) else { continue }
            revenue.append(figures)
            events.append(
                builder.playEvent(
                    eventType, key: key, at: latest.purchaseTime, productId: latest.productId, orderId: latest.orderId,
                    purchaseToken: token, periodType: nil, figures: figures, money: .charged,
                    summary: "bought \(latest.productId) on Google Play"))
            for refund in refunds.refunds {
                let fact = refund.fact
                var event = builder.playEvent(
                    .refund, key: refund.key, at: fact.voidedAt,
                    productId: latest.productId, orderId: latest.orderId, purchaseToken: token, periodType: nil,
                    figures: figures, money: refund.share.map { .refunded($0) } ?? .none,
                    summary: fact.isFull
                        ? "refunded in full on Google Play"
                        : "refunded \(fact.voidedQuantity.map(String.init) ?? "some") of \(latest.quantity) unit(s) on Google Play"
                )
                event.refundReason = refund.refundReason
                PlayOrderRefunds.apply(refund, of: figures, to: &event)
                events.append(event)
            }
        }
    }
}
