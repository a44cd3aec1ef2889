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
        // transaction id, in purchase order.
        var chains: [String: [TransactionFact]] = [:]
        for transaction in transactions where isAutoRenewable(transaction, catalog: catalog) {
            chains[transaction.originalTransactionId, default: []].append(transaction)
        }
        return accruedBefore(
            chains: chains.values.map { FactLedger.ordered($0, by: FactLedger.byPurchase) }, catalog: catalog)
    }

    /// The same, given the customer's subscription chains: each one original transaction id's
    /// auto-renewable transactions (latest versions) in purchase order.
    static func accruedBefore(chains: [[TransactionFact]], catalog: ProductCatalog) -> [String: Int64] {
        var periodsByGroup: [String: [Period]] = [:]
        var count = 0
        for chain in chains where !chain.isEmpty {
            let group = SubscriptionChain.group(startingWith: chain[0], catalog: catalog)
            for index in chain.indices {
                let next = index + 1 < chain.count ? chain[index + 1] : nil
                guard let period = paidPeriod(chain[index], next: next, product: catalog[chain[index].productId])
                else { continue }
                periodsByGroup[group, default: []].append(period)
                count += 1
            }
        }
        // Sized up front: grown one transaction at a time, the table rehashed every id in it at
        // each doubling (a long history's profile showed it).
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

    /// One transaction's paid service: from its purchase to where the service it paid for ends.
    struct Period {
        var start: Timestamp
        var end: Timestamp
        var transactionId: String

        static func precedes(_ lhs: Period, _ rhs: Period) -> Bool {
            lhs.start != rhs.start ? lhs.start < rhs.start : lhs.transactionId < rhs.transactionId
        }
    }

    /// The paid period of one auto-renewable `transaction` (`next`: the chain's following
    /// transaction; `product`: the catalog's, or nil), or nil when it bought no paid service.
    static func paidPeriod(_ transaction: TransactionFact, next: TransactionFact?, product: CatalogProduct?)
        -> Period?
    {
        guard transaction.ownership == .purchased, transaction.revocationType != .familyRevoke,
            transaction.periodType != .trial, transaction.price != 0
        else { return nil }
        let start = transaction.purchaseDate
        var end = transaction.expiresDate ?? start
        if let duration = product?.duration { end = min(end, duration.end(from: start)) }
        if SubscriptionChain.isSuperseded(transaction, next: next) {
            end = min(end, transaction.revocationDate ?? next?.purchaseDate ?? end)
        } else if let revokedAt = transaction.revocationDate {
            // A full refund gives the service back: no paid day was bought.
            end = transaction.revocationType == .refundProrated ? min(end, revokedAt) : start
        }
        return Period(start: start, end: max(start, end), transactionId: transaction.transactionId)
    }

    static func isAutoRenewable(_ transaction: TransactionFact, catalog: ProductCatalog) -> Bool {
        isAutoRenewable(transaction, product: catalog[transaction.productId])
    }

    /// The same, given the transaction's product as the catalog has it (nil when it has none).
    static func isAutoRenewable(_ transaction: TransactionFact, product: CatalogProduct?) -> Bool {
        (product?.kind ?? transaction.productKind) == .autoRenewable
    }
}
