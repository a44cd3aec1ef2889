import AppStoreModels

/// Apple's count of paid service in a subscription group, the condition of the reduced
/// commission: for each paid auto-renewable transaction, how much paid service the subscriber
/// had in its group before it was purchased.
///
/// The one reading of paid service: the engine's `CustomerInfo.revenue` and analytics'
/// proceeds both take it from here, so a customer's 15 % starts at the same transaction in the
/// API and in the figures.
///
/// A paid period (paid offers included; free trials, free offers and family sharing not)
/// counts from its purchase for the product's duration, so a renewal-date extension adds
/// nothing; it is cut where an upgrade replaced it (Apple's `isUpgraded`, or a purchase of
/// another product of the chain well before its expiry, as `SubscriptionChain` reads it) or at
/// a prorated refund, and a full refund counts nothing. Overlapping periods count once. A gap
/// of more than 60 days between the end of paid service and the next paid purchase restarts
/// the count; a fully refunded period is no service, so it does not bridge such a gap.
/// - Note: Stateless; `Sendable`.
public enum PaidServiceAccrual {
    /// A lapse longer than this restarts the count; one of exactly 60 days does not.
    public static let longestLapseKept: Int64 = 60 * CivilCalendar.millisecondsPerDay

    /// Milliseconds of paid service in the group before each paid auto-renewable transaction,
    /// by transaction id. `transactions` are the latest versions of one customer's transactions.
    public static func accruedBefore(_ transactions: [TransactionFact], catalog: ProductCatalog) -> [String: Int64] {
        // The chains as the engine reads them: auto-renewable transactions by original
        // transaction id, in purchase order; as positions (a copy of a transaction retains each
        // of its strings).
        var accrual = Accrual(catalog: catalog)
        var chainByOriginal: [String: Int] = [:]
        var chains: [[Int]] = []
        // The chain found last: a customer's transactions mostly come chain after chain.
        var last: (original: String, chain: Int)?
        for position in transactions.indices
        where isAutoRenewable(transactions[position], kind: accrual.terms(transactions[position].productId).kind) {
            let original = transactions[position].originalTransactionId
            let chain: Int
            if let last, last.original == original {
                chain = last.chain
            } else if let known = chainByOriginal[original] {
                chain = known
            } else {
                chain = chains.count
                chainByOriginal[original] = chain
                chains.append([])
            }
            chains[chain].append(position)
            last = (original, chain)
        }
        for chain in chains {
            accrual.add(
                chain: FactLedger.ordered(chain) { FactLedger.byPurchase(transactions[$0], transactions[$1]) },
                of: transactions)
        }
        return accrual.accruedBefore()
    }

    /// The same, given the engine's subscription chains.
    static func accruedBefore(chains: [SubscriptionChain], catalog: ProductCatalog) -> [String: Int64] {
        var accrual = Accrual(catalog: catalog)
        for chain in chains { accrual.add(chain: chain.transactions.indices, of: chain.transactions) }
        return accrual.accruedBefore()
    }

    /// Paid service read chain by chain: each chain is one original transaction id's
    /// auto-renewable transactions (latest versions) in purchase order.
    struct Accrual {
        let catalog: ProductCatalog
        private var periodsByGroup: [String: [Period]] = [:]
        private var count = 0
        /// The terms of the product looked up last: a chain is mostly one product, each lookup
        /// hashes its id, and a copy of the whole product retains each of its strings.
        private var last: (productId: String, terms: Terms)?

        /// What the accrual reads of a product in the catalog (nil: the catalog does not list it).
        struct Terms {
            var kind: ProductKind?
            var duration: SubscriptionPeriod?
        }

        init(catalog: ProductCatalog) { self.catalog = catalog }

        mutating func terms(_ productId: String) -> Terms {
            if let last, last.productId == productId { return last.terms }
            let product = catalog[productId]
            let terms = Terms(kind: product?.kind, duration: product?.duration)
            last = (productId, terms)
            return terms
        }

        /// Adds the chain whose transactions are at `positions` of `transactions`.
        mutating func add(chain positions: some Collection<Int>, of transactions: [TransactionFact]) {
            guard let first = positions.first else { return }
            var periods: [Period] = []
            var position: Int? = first
            var rest = positions.dropFirst().makeIterator()
            while let current = position {
                position = rest.next()
                let duration = terms(transactions[current].productId).duration
                if let period = PaidServiceAccrual.paidPeriod(
                    in: transactions, at: current, next: position, duration: duration)
                {
                    periods.append(period)
                }
            }
            guard !periods.isEmpty else { return }
            count += periods.count
            periodsByGroup[SubscriptionChain.group(startingWith: transactions[first], catalog: catalog), default: []]
                .append(contentsOf: periods)
        }

        /// Milliseconds of paid service in the group before each paid period's transaction.
        func accruedBefore() -> [String: Int64] {
            // Sized up front: grown one transaction at a time, the table rehashed every id in it
            // at each doubling (a long history's profile showed it).
            var accruedBefore: [String: Int64] = [:]
            accruedBefore.reserveCapacity(count)
            for periods in periodsByGroup.values {
                // Distinct transactions, so the order is total; one chain's periods come in order.
                var accrued: Int64 = 0
                var coveredUntil: Timestamp?
                for period in FactLedger.ordered(periods, by: Period.precedes) {
                    if let coveredUntil,
                        period.start.millisecondsSince1970 - coveredUntil.millisecondsSince1970 > longestLapseKept
                    {
                        accrued = 0
                    }
                    accruedBefore[period.transactionId] = accrued
                    // Overlaps (a renewal charged before the previous expiry, an upgrade) count once.
                    let countedFrom = max(period.start, coveredUntil ?? period.start)
                    accrued += max(0, period.end.millisecondsSince1970 - countedFrom.millisecondsSince1970)
                    if period.end > period.start { coveredUntil = max(coveredUntil ?? period.end, period.end) }
                }
            }
            return accruedBefore
        }
    }

    /// One transaction's paid service: from its purchase to where the service it paid for ends.
    struct Period {
        var start: Timestamp
        var end: Timestamp
        var transactionId: String

        static func precedes(_ lhs: Period, _ rhs: Period) -> Bool {
            lhs.start != rhs.start ? lhs.start < rhs.start : lhs.transactionId < rhs.transactionId
        }
    }

    /// The paid period of the auto-renewable transaction at `position` of `transactions`
    /// (`next`: the position of the chain's following one; `duration`: its product's in the
    /// catalog, or nil), or nil when it bought no paid service.
    static func paidPeriod(
        in transactions: [TransactionFact], at position: Int, next: Int?, duration: SubscriptionPeriod?
    ) -> Period? {
        let transaction = transactions[position]
        guard transaction.ownership == .purchased, transaction.revocationType != .familyRevoke,
            transaction.periodType != .trial, transaction.price != 0
        else { return nil }
        let start = transaction.purchaseDate
        var end = transaction.expiresDate ?? start
        if let duration { end = min(end, duration.end(from: start)) }
        if SubscriptionChain.isSuperseded(in: transactions, at: position, next: next) {
            end = min(end, transaction.revocationDate ?? next.map { transactions[$0].purchaseDate } ?? end)
        } else if let revokedAt = transaction.revocationDate {
            // A full refund gives the service back: no paid day was bought.
            end = transaction.revocationType == .refundProrated ? min(end, revokedAt) : start
        }
        return Period(start: start, end: max(start, end), transactionId: transaction.transactionId)
    }

    /// Whether `transaction` is an auto-renewable subscription's, as the engine reads it: by
    /// the catalog's kind, else the kind Apple signed (a legacy receipt's entry is auto-renewable
    /// when it expires). Subscriber activity, paid service, proceeds and retention all ask here.
    static func isAutoRenewable(_ transaction: TransactionFact, catalog: ProductCatalog) -> Bool {
        isAutoRenewable(transaction, product: catalog[transaction.productId])
    }

    /// The same, given the transaction's product as the catalog has it (nil when it has none).
    static func isAutoRenewable(_ transaction: TransactionFact, product: CatalogProduct?) -> Bool {
        isAutoRenewable(transaction, kind: product?.kind)
    }

    /// The same, given the kind the catalog gives the transaction's product (nil when it has none).
    static func isAutoRenewable(_ transaction: TransactionFact, kind: ProductKind?) -> Bool {
        (kind ?? transaction.productKind) == .autoRenewable
    }
}
