import AppStoreModels

/// Google Play subscriptions in the engine's terms: per purchase token and product, the state
/// at `now` read from the latest snapshot, the events read from all of them, and the money of
/// each order.
///
/// Access: `ACTIVE`, `IN_GRACE_PERIOD` and `CANCELED` give access until the line item's
/// expiry; `ON_HOLD` (billing retry, not churned), `PAUSED`, `PENDING`, `EXPIRED` and
/// `PENDING_PURCHASE_CANCELED` give none. A token named by another token's
/// `linkedPurchaseToken` (upgrade, downgrade, resubscription, plan conversion) stops granting
/// when the new one starts. A full refund or revocation (`PlayVoidedPurchaseFact`) ends access
/// at the voided time; a partial refund only takes money back.
struct PlaySubscriptions {
    /// The token that replaced another, and when.
    struct Replacement {
        var purchaseToken: String
        var startedAt: Timestamp
        var productIds: [String]
    }

    private(set) var subscriptions: [(info: SubscriptionInfo, accessEnd: Timestamp)] = []
    private(set) var events: [LifecycleEvent] = []
    private(set) var revenue: [TransactionRevenue] = []
    private(set) var notes: [String] = []
    /// Order ids and tokens whose events may be retracted when a later read changes them.
    private(set) var causeIds: Set<String> = []
    /// Orders read from the orders API: their exact developer revenue.
    private var orderReads: [String: PlayOrderFact] = [:]

    init(
        ledger: PlayLedger, now: Timestamp, catalog: ProductCatalog, builder: LifecycleEventBuilder,
        rule: PlayCommissionRule
    ) {
        orderReads = ledger.ordersById
        var replacements: [String: Replacement] = [:]
        var productsByToken: [String: [String]] = [:]
        for (token, snapshots) in ledger.subscriptionsByToken {
            productsByToken[token] = Array(Set(snapshots.flatMap { $0.lineItems.map(\.productId) })).sorted()
        }
        for token in ledger.subscriptionsByToken.keys.sorted() {
            let snapshots = ledger.subscriptionsByToken[token]!
            guard let linked = snapshots.last(where: { $0.linkedPurchaseToken != nil })?.linkedPurchaseToken,
                linked != token
            else { continue }
            let startedAt = snapshots.compactMap(\.startTime).min() ?? snapshots[0].readAt
            let candidate = Replacement(
                purchaseToken: token, startedAt: startedAt, productIds: productsByToken[token] ?? [])
            // Two tokens naming the same predecessor: the earlier start replaced it.
            if let kept = replacements[linked],
                (kept.startedAt, kept.purchaseToken) < (candidate.startedAt, candidate.purchaseToken)
            {
                continue
            }
            replacements[linked] = candidate
        }
        for token in ledger.subscriptionsByToken.keys.sorted() {
            let snapshots = ledger.subscriptionsByToken[token]!
            let voided = (ledger.voidedByToken[token] ?? []).filter { $0.applies(to: .subscription) }
            let linked = snapshots.last(where: { $0.linkedPurchaseToken != nil })?.linkedPurchaseToken
            // A voided order no read of the token showed refunds none of them: said once.
            let tokenOrders = Set(snapshots.flatMap { $0.lineItems.compactMap(\.latestSuccessfulOrderId) })
            for fact in voided {
                guard let orderId = fact.orderId, !tokenOrders.contains(orderId) else { continue }
                notes.append(Self.unknownOrderNote(fact, orderId: orderId))
            }
            let predecessorProducts = linked.flatMap { productsByToken[$0] }
            for productId in productsByToken[token] ?? [] {
                let history = PlayOrderHistory(productId: productId, snapshots: snapshots)
                guard !history.entries.isEmpty else { continue }
                evaluate(
                    token: token, history: history, latestSnapshot: snapshots.last!, voided: voided,
                    replacement: replacements[token], linked: linked, predecessorProducts: predecessorProducts,
                    now: now, catalog: catalog, builder: builder, rule: rule)
            }
        }
    }

    // MARK: - One line item

    private mutating func evaluate(
        token: String, history: PlayOrderHistory, latestSnapshot: PlaySubscriptionFact,
        voided: [PlayVoidedPurchaseFact], replacement: Replacement?, linked: String?, predecessorProducts: [String]?,
        now: Timestamp, catalog: ProductCatalog, builder: LifecycleEventBuilder, rule: PlayCommissionRule
    ) {
        let productId = history.productId
        let orders = history.orders
        let latest = history.entries.last!
        let isAutoRenewing = latest.item.planType != .prepaid
        if catalog[productId] == nil {
            notes.append("product \(productId) is not in the catalog: recorded, grants nothing")
        }
        causeIds.insert(token)

        // Money: one entry per charged order; a voided fact names its order, or (naming none)
        // the latest. One naming an order no read showed takes money from no other order.
        let lastOrderId = orders.last(where: { $0.orderId != nil })?.orderId
        let knownOrders = Set(orders.compactMap(\.orderId))
        let voided = voided.filter { $0.refundedOrder(known: knownOrders, latest: lastOrderId ?? token) != nil }
        let refunds = PlayOrderRefunds(voided: voided, quantity: 1) { fact in
            fact.refundedOrder(known: knownOrders, latest: lastOrderId ?? token)!
        }
        let refundShares = refunds.shares
        var figuresByOrder: [String: TransactionRevenue] = [:]
        for (index, order) in orders.enumerated() {
            guard let orderId = order.orderId else { continue }
            causeIds.insert(orderId)
            let figures = PlayRevenue.figures(
                orderId: orderId, productId: productId, purchaseDate: history.start(index),
                shownPrice: order.recurringPrice, quantity: 1, isAutoRenewing: isAutoRenewing,
                isTrial: order.periodType == .trial, isPaid: true, refundShare: refundShares[orderId], catalog: catalog,
                rule: rule, order: orderReads[orderId])
            figuresByOrder[orderId] = figures
            revenue.append(figures)
        }

        // Only a full void of the token's latest order (or one naming no order: a revocation)
        // ends access; Google lists voids per order, and refunding an earlier charge in full
        // leaves the subscription running (it once ended it for good).
        let fullVoid = voided.first { fact in
            fact.isFull && fact.refundedOrder(known: knownOrders, latest: lastOrderId ?? token) == lastOrderId ?? token
        }
        let replacedAt = replacement.map(\.startedAt)
        events += orderEvents(
            token: token, history: history, figures: figuresByOrder, replacedAt: replacedAt, fullVoid: fullVoid,
            linked: linked, predecessorProducts: predecessorProducts, now: now, catalog: catalog, builder: builder)
        for refund in refunds.refunds {
            let fact = refund.fact
            let orderId = figuresByOrder[refund.orderKey] != nil ? refund.orderKey : nil
            let revocation = Revocation(
                kind: .refund, revokedAt: fact.voidedAt, refundReason: refund.refundReason,
                refundPercentage: fact.isFull ? nil : refund.share)
            var event = builder.playEvent(
                .refund, key: Self.key(refund.key, productId: productId), at: fact.voidedAt, productId: productId,
                orderId: orderId, purchaseToken: token, periodType: nil,
                figures: orderId.flatMap { figuresByOrder[$0] }, money: refund.share.map { .refunded($0) } ?? .none,
                summary: fact.isFull
                    ? "refunded in full on Google Play: \(revocation.text)"
                    : "refunded in part on Google Play (\(fact.voidedQuantity.map(String.init) ?? "some") unit(s))")
            event.refundReason = refund.refundReason
            if let figures = orderId.flatMap({ figuresByOrder[$0] }) {
                PlayOrderRefunds.apply(refund, of: figures, to: &event)
            }
            events.append(event)
        }

        // State at `now`, from the latest read. Its order need not be the last order: a lagging
        // read can name an earlier one, so the hold and pause times fall back to the read's own
        // time (force-unwrapping them crashed the server on such a read).
        let expiry = latest.expiry
        let state = latest.state
        let lastOrder = orders.last!
        var status: SubscriptionStatus
        var isActive = false
        var reason: String
        var grace: Timestamp?
        var billingIssueAt: Timestamp?
        var expirationReason: ExpirationReason?
        var revocation: Revocation?
        var accessEnd = lastOrder.accessEnd
        let itemRemoved = !latestSnapshot.lineItems.contains { $0.productId == productId }
        if let fullVoid {
            revocation = Revocation(
                kind: .refund, revokedAt: fullVoid.voidedAt, refundReason: fullVoid.refundReason,
                refundPercentage: nil)
            status = .refunded
            accessEnd = min(fullVoid.voidedAt, max(expiry, accessEnd))
            isActive = now < accessEnd && latest.isGranting
            reason = revocation!.text
        } else if let replacement {
            let sameProduct = replacement.productIds.contains(productId)
            status = sameProduct ? .expired : .productChanged
            accessEnd = min(expiry, replacement.startedAt)
            isActive = now < accessEnd && latest.isGranting
            reason =
                sameProduct
                ? "replaced by a new purchase of \(productId) on \(replacement.startedAt.humanReadable)"
                : "changed to \(replacement.productIds.joined(separator: ", ")) on \(replacement.startedAt.humanReadable)"
        } else if itemRemoved {
            status = .expired
            accessEnd = min(accessEnd, latestSnapshot.readAt)
            isActive = false
            expirationReason = .other
            reason = "removed from the subscription by \(latestSnapshot.readAt.humanReadable)"
        } else {
            switch state {
            case .active?, .canceled?:
                if now < expiry {
                    status = .active
                    isActive = true
                    accessEnd = expiry
                    reason = "active until \(expiry.humanReadable)"
                } else {
                    status = .expired
                    expirationReason = Self.expirationReason(latest)
                    reason = "expired \(expiry.humanReadable), \(expirationReason!.text) (no later read of the token)"
                }
            case .inGracePeriod?:
                billingIssueAt = lastOrder.billingIssueAt
                if now < expiry {
                    status = .inGracePeriod
                    isActive = true
                    grace = expiry
                    accessEnd = expiry
                    reason =
                        "in billing grace period until \(expiry.humanReadable): renewal failed, Google Play is retrying"
                } else {
                    status = .expired
                    expirationReason = .billingError
                    reason = "grace period ended \(expiry.humanReadable), \(ExpirationReason.billingError.text)"
                }
            case .onHold?:
                status = .inBillingRetry
                billingIssueAt = lastOrder.billingIssueAt
                reason =
                    "account hold since \((lastOrder.holdAt ?? latest.snapshot.readAt).humanReadable): no access until the payment recovers (not churned)"
            case .paused?:
                status = .paused
                reason =
                    "paused since \((lastOrder.pausedAt ?? latest.snapshot.readAt).humanReadable)"
                    + (latest.snapshot.autoResumeTime.map { ", resumes \($0.humanReadable)" } ?? "")
            case .pending?:
                status = .pending
                reason = "payment pending: no access until Google Play confirms it"
            case .expired?:
                status = .expired
                expirationReason = Self.expirationReason(latest)
                reason = "expired \(accessEnd.humanReadable), \(expirationReason!.text)"
            case .pendingPurchaseCanceled?:
                status = .expired
                expirationReason = .other
                reason = "pending purchase canceled: never paid"
            case .unspecified?, nil:
                status = .expired
                expirationReason = .unknown
                reason = "unknown subscription state \(latest.snapshot.state.rawValue): no access"
            }
        }
        let alive = status == .active || status == .inGracePeriod || status == .inBillingRetry || status == .paused
        let autoRenew = isAutoRenewing && latest.item.autoRenewEnabled != false && state != .canceled
        var unsubscribeAt: Timestamp?
        if alive {
            if autoRenew {
                reason += status == .active ? "; renews" : ""
            } else if !isAutoRenewing {
                reason += "; prepaid: does not renew"
            } else {
                unsubscribeAt =
                    latest.snapshot.canceledAt
                    ?? history.entries.first { $0.item.autoRenewEnabled == false || $0.state == .canceled }?.snapshot
                    .readAt
                reason += "; will not renew: canceled on Google Play since \(unsubscribeAt!.humanReadable)"
            }
        }
        let periodType = lastOrder.periodType
        if periodType != .normal { reason += " (\(periodType.rawValue.lowercased()) period)" }
        let charged = orders.last { $0.orderId != nil }
        var info = SubscriptionInfo(
            productId: productId, subscriptionGroup: catalog[productId]?.subscriptionGroup ?? "product:\(productId)",
            status: status, isActive: isActive, transactionId: charged?.orderId ?? token,
            originalTransactionId: token,
            purchaseDate: orders.indices.last.map { history.start($0) } ?? latest.snapshot.readAt,
            originalPurchaseDate: history.entries.compactMap(\.snapshot.startTime).min(),
            expiresDate: latest.item.expiryTime, periodType: periodType, offerIdentifier: latest.item.offerId,
            willRenew: alive && autoRenew, autoRenewProductId: alive && autoRenew ? productId : nil,
            pendingProductChange: nil, unsubscribeDetectedAt: unsubscribeAt, billingIssueDetectedAt: billingIssueAt,
            gracePeriodExpiresDate: grace, expirationReason: expirationReason, priceIncreaseConsent: nil,
            revocation: revocation, ownership: .purchased, environment: latestSnapshot.environment,
            price: charged?.orderId.flatMap { figuresByOrder[$0]?.price }, reason: reason)
        info.store = .playStore
        if catalog[productId] == nil { info.isUnknownProduct = true }
        subscriptions.append((info, accessEnd))
    }

    /// What the customer's notes say of a voided record naming an order that no read showed.
    static func unknownOrderNote(_ fact: PlayVoidedPurchaseFact, orderId: String) -> String {
        "voided order \(orderId) (\(fact.voidedAt.humanReadable)) is not an order Storekeeper read for its purchase: "
            + "kept, no revenue taken from another order"
    }

    /// Why a line item ended, from the cancellation Google reports or the last auto-renew flag.
    static func expirationReason(_ entry: PlayOrderHistory.Entry) -> ExpirationReason {
        switch entry.snapshot.cancelReason {
        case .user?: return .customerCancelled
        case .system?: return .billingError
        case .developer?: return .other
        case .replacement?: return .other
        case nil:
            if entry.state == .onHold { return .billingError }
            if entry.state == .paused { return .paused }
            if entry.item.planType == .prepaid { return .other }
            return entry.item.autoRenewEnabled == false ? .customerCancelled : .unknown
        }
    }

    // MARK: - Events

    /// An event key with the line item's product after its cause (`<orderId>/<productId>[/…]`):
    /// the line items of one purchase share their orders, so an order alone named two events
    /// with one id and the second was dropped. The cause stays first: retraction reads it there.
    static func key(_ key: String, productId: String) -> String {
        guard let slash = key.firstIndex(of: "/") else { return key + "/" + productId }
        return key[..<slash] + "/" + productId + key[slash...]
    }

    private func orderEvents(
        token: String, history: PlayOrderHistory, figures: [String: TransactionRevenue], replacedAt: Timestamp?,
        fullVoid: PlayVoidedPurchaseFact?, linked: String?, predecessorProducts: [String]?, now: Timestamp,
        catalog: ProductCatalog, builder: LifecycleEventBuilder
    ) -> [LifecycleEvent] {
        let productId = history.productId
        let orders = history.orders
        var events: [LifecycleEvent] = []
        func event(
            _ type: LifecycleEventType, _ key: String, at: Timestamp, order: PlayOrderHistory.Order,
            money: LifecycleEventBuilder.MoneySign = .none, summary: String
        ) -> LifecycleEvent {
            builder.playEvent(
                type, key: Self.key(key, productId: productId), at: at, productId: productId, orderId: order.orderId,
                purchaseToken: token,
                periodType: order.periodType, figures: order.orderId.flatMap { figures[$0] }, money: money,
                summary: summary)
        }
        for (index, order) in orders.enumerated() {
            guard let orderId = order.orderId else { continue }
            let start = history.start(index)
            if index == 0 {
                if linked != nil, let from = predecessorProducts, !from.isEmpty {
                    if from.contains(productId) {
                        var resubscribed = event(
                            .renewal, orderId, at: start, order: order, money: .charged,
                            summary: "resubscribed to \(productId) on Google Play (replaces an earlier purchase token)")
                        resubscribed.isResubscription = true
                        events.append(resubscribed)
                    } else {
                        let change = ProductChange(
                            fromProductId: from[0], toProductId: productId,
                            kind: ProductChange.classify(
                                from: catalog[from[0]], to: catalog[productId], timing: .immediate),
                            timing: .immediate, effectiveAt: start)
                        var changed = event(
                            .productChange, orderId, at: start, order: order, money: .charged,
                            summary:
                                "\(change.kind.rawValue.lowercased()) from \(from[0]) to \(productId) on Google Play, effective at once"
                        )
                        changed.productChange = change
                        events.append(changed)
                    }
                } else if order.periodType == .trial {
                    events.append(
                        event(
                            .trialStarted, orderId, at: start, order: order, money: .charged,
                            summary: "free trial of \(productId) on Google Play"))
                } else {
                    events.append(
                        event(
                            .initialPurchase, orderId, at: start, order: order, money: .charged,
                            summary: "subscribed to \(productId) on Google Play"))
                }
            } else {
                let previous = orders[index - 1]
                if previous.orderId != nil, previous.accessEnd < start {
                    events.append(expiration(previous, at: previous.accessEnd, event: event))
                }
                if previous.billingIssueAt != nil {
                    events.append(
                        event(
                            .billingRecovered, orderId, at: start, order: order,
                            summary: "payment recovered on Google Play after a billing issue"))
                    events.append(
                        event(
                            .renewal, orderId, at: start, order: order, money: .charged,
                            summary: "renewed \(productId) after a billing issue"))
                } else if previous.pausedAt != nil {
                    events.append(
                        event(
                            .renewal, orderId, at: start, order: order, money: .charged,
                            summary: "resumed \(productId) after a pause"))
                } else if previous.periodType == .trial && order.periodType != .trial {
                    events.append(
                        event(
                            .trialConverted, orderId, at: start, order: order, money: .charged,
                            summary: "trial converted to a paid period of \(productId)"))
                } else {
                    events.append(
                        event(
                            .renewal, orderId, at: start, order: order, money: .charged,
                            summary:
                                "renewed \(productId) on Google Play until \(order.entries.last!.expiry.humanReadable)"
                        ))
                }
            }
            if let at = order.billingIssueAt {
                events.append(
                    event(
                        .billingIssue, orderId, at: at, order: order,
                        summary: "renewal of \(productId) failed; Google Play is retrying"))
            }
            if let at = order.graceStartedAt, let graceEnd = order.graceExpiry {
                var started = event(
                    .gracePeriodStarted, orderId, at: at, order: order,
                    summary: "billing grace period until \(graceEnd.humanReadable)")
                started.gracePeriodExpiresDate = graceEnd
                events.append(started)
            }
            if let at = order.pausedAt {
                events.append(
                    event(.subscriptionPaused, orderId, at: at, order: order, summary: "paused by the customer"))
            }
            // A later expiry under the same order is a deferred renewal (no charge).
            var furthest: Timestamp?
            for entry in order.entries where entry.state == .active || entry.state == .canceled {
                if let known = furthest, entry.expiry > known {
                    var extended = event(
                        .subscriptionExtended, "\(orderId)/\(entry.expiry.millisecondsSince1970)",
                        at: entry.snapshot.readAt, order: order,
                        summary: "renewal deferred from \(known.humanReadable) to \(entry.expiry.humanReadable)")
                    extended.expiresDate = entry.expiry
                    events.append(extended)
                }
                furthest = max(furthest ?? entry.expiry, entry.expiry)
            }
        }

        // Auto-renew turned off and on again, over the whole token.
        var enabled = true
        for entry in history.entries {
            guard
                let orderId = orders.last(where: { $0.orderId != nil && $0.firstRead <= entry.snapshot.readAt })?
                    .orderId,
                let order = orders.first(where: { $0.orderId == orderId }),
                entry.item.planType != .prepaid,
                entry.snapshot.cancelReason != .replacement, entry.snapshot.cancelReason != .system
            else { continue }
            let value = entry.item.autoRenewEnabled ?? (entry.state != .canceled)
            guard entry.state != .expired || entry.snapshot.cancelReason == .user else { continue }
            if enabled && !value {
                let at = entry.snapshot.canceledAt ?? entry.snapshot.readAt
                events.append(
                    event(
                        .cancellation, "\(orderId)/\(at.millisecondsSince1970)", at: at, order: order,
                        summary: "auto-renew of \(productId) turned off on Google Play"))
            } else if !enabled && value {
                let at = entry.snapshot.readAt
                events.append(
                    event(
                        .uncancellation, "\(orderId)/\(at.millisecondsSince1970)", at: at, order: order,
                        summary: "auto-renew of \(productId) turned back on (restarted)"))
            }
            enabled = value
        }

        // The end of access of the latest order, when it is over and nothing replaced it.
        if let last = orders.last, last.orderId != nil, replacedAt == nil, fullVoid == nil {
            let latest = history.entries.last!
            let stillGranting = latest.isGranting && now < latest.expiry
            if !stillGranting, now >= last.accessEnd {
                events.append(expiration(last, at: last.accessEnd, event: event))
            }
        }
        return events
    }

    private func expiration(
        _ order: PlayOrderHistory.Order, at: Timestamp,
        event: (
            LifecycleEventType, String, Timestamp, PlayOrderHistory.Order, LifecycleEventBuilder.MoneySign, String
        ) -> LifecycleEvent
    ) -> LifecycleEvent {
        let lastEntry =
            order.entries.first(where: { $0.isWithoutAccess && $0.snapshot.readAt >= at }) ?? order.entries.last!
        let reason = Self.expirationReason(lastEntry)
        var expired = event(.expiration, order.orderId!, at, order, .none, "access ended, \(reason.text)")
        expired.expirationReason = reason
        return expired
    }
}
