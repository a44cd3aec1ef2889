import AppStoreModels

/// A customer's Google Play purchases as analytics counts them: one `Charge` per order of a
/// subscription line item (each charge is one period, like one Apple transaction) and one per
/// one-time product purchase token, with the money of `PlayRevenue` (Google's service fee from
/// `PlayCommissionRule`), the refund, and for subscriptions the span of access.
///
/// The rules mirror the App Store's (`SubscriptionActivity`, `TrialOutcome`, `PaidRuns`):
/// - A period is active from the order's start until its access ended (grace included; cut at
///   the next order's start, at a read without access — hold, pause — and at the start of the
///   token that replaced it). An order voided in full counts at no instant; a partial refund
///   leaves it active.
/// - A refund is one per order, however many voided records name it: a `SUBSCRIPTION_REVOKED`
///   notification and the voided purchase of the same order are one refund, at the earlier
///   time, of the larger share, with the reason the voided-purchases list gave.
/// - A trial converted when a later charge of the same line item is not a trial; is pending
///   while its access lasts with auto-renew on; abandoned otherwise.
/// - Why access ended: Google's `canceledStateContext` (user: voluntary; system: involuntary;
///   developer, replacement: other), a hold (involuntary), a pause (voluntary), auto-renew off
///   (voluntary); `nil` while the latest read still gives access and renews.
/// An order read from the orders API (`PlayOrderFact`) brings its exact developer revenue as
/// the proceeds; orders not read keep the rule's estimate.
/// - Note: Immutable value; `Sendable`.
struct PlayAnalyticsCharges: Sendable {
    struct Charge: Sendable {
        /// The order id (the token for a one-time purchase without one).
        var orderId: String
        /// The period's id: the order id, with the product when the token has several line
        /// items (Google may charge them in one order).
        var periodId: String
        var purchaseToken: String
        var productId: String
        var subscriptionGroup: String?
        /// Google's ISO 3166-1 alpha-2 billing country, empty when not given.
        var storefront: String
        var purchaseDate: Timestamp
        /// Empty when no price is known.
        var currency: String
        var gross: Int64
        var proceeds: Int64
        var refundedAt: Timestamp?
        var refundReason: RefundReason?
        var isPartialRefund: Bool
        var refunded: Int64
        var refundedProceeds: Int64
        var isTrial: Bool
        /// Subscriptions only: when the period gives access.
        var active: (start: Timestamp, end: Timestamp)?
        var trialOutcome: TrialOutcome?
        var churnReason: ChurnReason?
        /// Subscriptions only: the order's offer phase as a period type (`.normal` for products).
        var periodType: PeriodType = .normal
        /// Subscriptions only: the subscription the order belongs to for retention, as an
        /// original transaction id is Apple's: the first token of its chain of replacements
        /// (`linkedPurchaseToken`), with the product when the token has several line items.
        var subscription: String?
        /// The token's last order, cut short by the token that replaced it (an upgrade or a
        /// downgrade, which Google applies at once and credits to the new token): not a
        /// payment for retention, as Apple's upgraded-away transaction is not.
        var isReplacedAway = false

        var isPaid: Bool { !isTrial && gross > 0 }
    }

    private(set) var charges: [Charge] = []
    /// Orders read from the orders API: their exact developer revenue replaces the rule's.
    private var orderReads: [String: PlayOrderFact] = [:]

    init(ledger: PlayLedger, now: Timestamp, catalog: ProductCatalog, rule: PlayCommissionRule) {
        orderReads = ledger.ordersById
        // The token that replaced each token (upgrade, downgrade, resubscription): the earliest
        // start among those naming it, as the engine decides (`PlaySubscriptions`).
        var replacedAt: [String: (start: Timestamp, token: String)] = [:]
        for token in ledger.subscriptionsByToken.keys.sorted() {
            let snapshots = ledger.subscriptionsByToken[token]!
            guard let linked = snapshots.last(where: { $0.linkedPurchaseToken != nil })?.linkedPurchaseToken,
                linked != token
            else { continue }
            let start = snapshots.compactMap(\.startTime).min() ?? snapshots[0].readAt
            if let kept = replacedAt[linked], (kept.start, kept.token) < (start, token) { continue }
            replacedAt[linked] = (start, token)
        }
        var linkedOf: [String: String] = [:]
        for (token, snapshots) in ledger.subscriptionsByToken {
            if let linked = snapshots.last(where: { $0.linkedPurchaseToken != nil })?.linkedPurchaseToken,
                linked != token
            {
                linkedOf[token] = linked
            }
        }
        /// The first token of `token`'s chain of replacements (a cycle, which Google never
        /// makes, stops where it closes).
        func chainStart(_ token: String) -> String {
            var (current, seen) = (token, Set([token]))
            while let linked = linkedOf[current], seen.insert(linked).inserted { current = linked }
            return current
        }
        for token in ledger.subscriptionsByToken.keys.sorted() {
            let snapshots = ledger.subscriptionsByToken[token]!
            let voided = (ledger.voidedByToken[token] ?? []).filter { $0.applies(to: .subscription) }
            let products = Set(snapshots.flatMap { $0.lineItems.map(\.productId) }).sorted()
            for productId in products {
                let history = PlayOrderHistory(productId: productId, snapshots: snapshots)
                guard !history.entries.isEmpty else { continue }
                subscription(
                    token: token, chainStart: chainStart(token), history: history, latestSnapshot: snapshots.last!,
                    voided: voided,
                    replacedAt: replacedAt[token]?.start, sharesOrders: products.count > 1, now: now,
                    catalog: catalog, rule: rule)
            }
        }
        for token in ledger.productsByToken.keys.sorted() {
            let reads = ledger.productsByToken[token]!
            let latest = reads.last!
            // As the engine (`PlayProductPurchases`): a voided record naming another order
            // refunds nothing here; pending purchases, and pending ones canceled, were never paid.
            let voided = (ledger.voidedByToken[token] ?? []).filter { fact in
                fact.applies(to: .oneTime)
                    && (fact.orderId == nil || latest.orderId == nil || fact.orderId == latest.orderId)
            }
            guard PlayProductPurchaseFact.wasCharged(reads: reads, voided: voided) else { continue }
            let refund = Self.refund(voided, quantity: latest.quantity)
            let figures = PlayRevenue.figures(
                orderId: latest.orderId ?? token, productId: latest.productId, purchaseDate: latest.purchaseTime,
                shownPrice: latest.price, quantity: latest.quantity, isAutoRenewing: false, isTrial: false,
                isPaid: latest.isPaid, refundShare: refund?.share, catalog: catalog, rule: rule,
                order: latest.orderId.flatMap { orderReads[$0] })
            charges.append(
                Self.charge(
                    figures, token: token, group: catalog[latest.productId]?.subscriptionGroup,
                    storefront: latest.regionCode, refund: refund, isTrial: false))
        }
    }

    /// The refund of one order from the voided records naming it: the earliest time, the
    /// shares added up (all of it once one is full, as the engine's `PlayOrderRefunds`), the
    /// first reason Google gave.
    private static func refund(_ facts: [PlayVoidedPurchaseFact], quantity: Int) -> (
        at: Timestamp, share: Int32, reason: RefundReason, isPartial: Bool
    )? {
        guard let first = facts.min(by: { $0.voidedAt < $1.voidedAt }) else { return nil }
        let summed = facts.reduce(Int64(0)) { $0 + Int64($1.isFull ? 100_000 : $1.share(of: quantity) ?? 0) }
        let share = Int32(min(summed, 100_000))
        let reason = facts.sorted { $0.voidedAt < $1.voidedAt }.first { $0.voidedReason != nil }?.refundReason
        return (first.voidedAt, share, reason ?? first.refundReason, !facts.contains(where: \.isFull))
    }

    private static func charge(
        _ figures: TransactionRevenue, token: String, group: String?, storefront: String?,
        refund: (at: Timestamp, share: Int32, reason: RefundReason, isPartial: Bool)?, isTrial: Bool
    ) -> Charge {
        let gross = figures.price?.milliunits ?? 0
        let proceeds = figures.proceeds?.milliunits ?? 0
        return Charge(
            orderId: figures.transactionId, periodId: figures.transactionId, purchaseToken: token,
            productId: figures.productId,
            subscriptionGroup: group, storefront: storefront ?? "", purchaseDate: figures.purchaseDate,
            currency: figures.price?.currency ?? "", gross: gross, proceeds: proceeds, refundedAt: refund?.at,
            refundReason: refund?.reason, isPartialRefund: refund?.isPartial ?? false,
            refunded: figures.refunded?.milliunits ?? 0,
            refundedProceeds: proceeds - (figures.netProceeds?.milliunits ?? proceeds), isTrial: isTrial,
            active: nil, trialOutcome: nil, churnReason: nil)
    }

    private mutating func subscription(
        token: String, chainStart: String, history: PlayOrderHistory, latestSnapshot: PlaySubscriptionFact,
        voided: [PlayVoidedPurchaseFact], replacedAt: Timestamp?, sharesOrders: Bool, now: Timestamp,
        catalog: ProductCatalog, rule: PlayCommissionRule
    ) {
        let orders = history.orders
        let latest = history.entries.last!
        let isAutoRenewing = latest.item.planType != .prepaid
        let lastOrderId = orders.last(where: { $0.orderId != nil })?.orderId
        // A voided record names its order, or (a revocation) none: then the latest. One naming
        // an order no read showed takes no money from another order (the engine's rule).
        var voidedByOrder: [String: [PlayVoidedPurchaseFact]] = [:]
        let knownOrders = Set(orders.compactMap(\.orderId))
        for fact in voided {
            guard let orderId = fact.refundedOrder(known: knownOrders, latest: lastOrderId) else { continue }
            voidedByOrder[orderId, default: []].append(fact)
        }
        // From the facts alone, not `now`: a rebuild at any later instant gives the same reason.
        let stillRenewing =
            latest.isGranting && isAutoRenewing && latest.item.autoRenewEnabled != false && latest.state != .canceled
            && replacedAt == nil
        let itemRemoved = !latestSnapshot.lineItems.contains { $0.productId == history.productId }
        let charged = orders.indices.filter { orders[$0].orderId != nil }
        for (position, index) in charged.enumerated() {
            let order = orders[index]
            let orderId = order.orderId!
            let isLast = position == charged.count - 1
            let refund = voidedByOrder[orderId].flatMap { Self.refund($0, quantity: 1) }
            let start = history.start(index)
            let isTrial = order.periodType == .trial
            let figures = PlayRevenue.figures(
                orderId: orderId, productId: history.productId, purchaseDate: start, shownPrice: order.recurringPrice,
                quantity: 1, isAutoRenewing: isAutoRenewing, isTrial: isTrial, isPaid: true,
                refundShare: refund?.share, catalog: catalog, rule: rule, order: orderReads[orderId])
            var charge = Self.charge(
                figures, token: token, group: catalog[history.productId]?.subscriptionGroup,
                storefront: latestSnapshot.regionCode, refund: refund, isTrial: isTrial)
            if sharesOrders { charge.periodId = orderId + "/" + history.productId }
            charge.periodType = order.periodType
            charge.subscription = sharesOrders ? chainStart + "/" + history.productId : chainStart
            // Cut short: replaced before the end of what was paid for (a read at the replacement
            // may already show it ended; a resubscription after the expiry is not cut short).
            let paidThrough = order.entries.filter(\.isGranting).map(\.expiry).max()
            if isLast, let replacedAt, let paidThrough, replacedAt < paidThrough { charge.isReplacedAway = true }
            var end = order.accessEnd
            if !isLast { end = min(end, history.start(charged[position + 1])) }
            if let replacedAt { end = min(end, replacedAt) }
            if isLast && itemRemoved { end = min(end, latestSnapshot.readAt) }
            let voidedInFull = voidedByOrder[orderId]?.contains(where: \.isFull) ?? false
            if !voidedInFull, start < end { charge.active = (start, end) }
            if isTrial {
                let convertedLater = charged[(position + 1)...].contains { orders[$0].periodType != .trial }
                if convertedLater {
                    charge.trialOutcome = .converted
                } else if let active = charge.active, now < active.end, isLast, latest.item.autoRenewEnabled != false,
                    latest.state != .canceled
                {
                    charge.trialOutcome = .pending
                } else {
                    charge.trialOutcome = .abandoned
                }
            }
            if !(isLast && stillRenewing) {
                let ending =
                    order.entries.first(where: \.isWithoutAccess) ?? (isLast ? latest : order.entries.last!)
                charge.churnReason = ChurnReason(PlaySubscriptions.expirationReason(ending))
            }
            charges.append(charge)
        }
    }
}
