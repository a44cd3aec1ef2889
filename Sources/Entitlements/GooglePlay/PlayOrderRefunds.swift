/// The refunds of one Play purchase, order by order: the one answer both the revenue entries and
/// the `REFUND` events are read from, so the money the events take back adds up to the order's
/// `refunded` figure.
///
/// Per order, in voided-time order: a full refund is reported once (a revocation read from the
/// notification and the voided-purchases record of the same order are one refund, not two);
/// each quantity-based partial refund takes its share, capped so an order never gives back more
/// than it took; a full refund after partial ones takes what is left; nothing after a full
/// refund counts. The order's refunded share is the sum of its refunds' shares (it was the
/// largest single share, while the events summed them).
struct PlayOrderRefunds {
    /// One refund to report: its fact, the order it refunds, its event key and its share in
    /// thousandths of a percent (`nil`: a partial refund that does not say how many units).
    struct Refund {
        var fact: PlayVoidedPurchaseFact
        var orderKey: String
        var key: String
        var share: Int32?
        var refundReason: RefundReason
        /// The share of the order refunded before this refund.
        var before: Int32
    }

    private(set) var refunds: [Refund] = []
    /// Per order, the share refunded in all (100000: in full).
    private(set) var shares: [String: Int32] = [:]

    /// `voided` in the ledger's order (voided time, then canonical); `orderKey` names the order
    /// a fact refunds.
    init(voided: [PlayVoidedPurchaseFact], quantity: Int, orderKey: (PlayVoidedPurchaseFact) -> String) {
        var closed: Set<String> = []
        for fact in voided {
            let order = orderKey(fact)
            guard !closed.contains(order) else { continue }
            let taken = shares[order] ?? 0
            if fact.isFull {
                closed.insert(order)
                // Google's record says why; a revocation read from a notification does not.
                let reason =
                    voided.first { orderKey($0) == order && $0.isFull && $0.voidedReason != nil }?.refundReason
                    ?? fact.refundReason
                refunds.append(
                    Refund(
                        fact: fact, orderKey: order, key: order, share: 100_000 - taken, refundReason: reason,
                        before: taken))
                shares[order] = 100_000
            } else {
                let share = fact.share(of: quantity).map { min($0, 100_000 - taken) }
                refunds.append(
                    Refund(
                        fact: fact, orderKey: order, key: "\(order)/\(fact.voidedAt.millisecondsSince1970)",
                        share: share, refundReason: fact.refundReason, before: taken))
                shares[order] = taken + (share ?? 0)
            }
        }
    }

    /// Puts the money `refund` takes back on its event: the order's refunded amount after it
    /// less the amount before it, each rounded as the revenue entry rounds its own, so the
    /// events of an order add up to its `refunded` and `netProceeds` to the milliunit.
    static func apply(_ refund: Refund, of figures: TransactionRevenue, to event: inout LifecycleEvent) {
        guard let share = refund.share else { return }
        func taken(_ money: Money?) -> Money? {
            money.map { amount in
                let after = amount.scaled(by: Int64(refund.before) + Int64(share), over: 100_000).milliunits
                let before = amount.scaled(by: Int64(refund.before), over: 100_000).milliunits
                return Money(milliunits: before - after, currency: amount.currency)
            }
        }
        event.price = taken(figures.price)
        event.proceeds = taken(figures.proceeds)
        event.commissionPercent = figures.commissionPercent
    }
}
