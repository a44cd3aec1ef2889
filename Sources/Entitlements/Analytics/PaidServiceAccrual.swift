import AppStoreModels

/// Apple's count of paid service in a subscription group, the condition of the reduced
/// commission: for each paid auto-renewable transaction, how much paid service the subscriber
/// had in its group before it was purchased.
///
/// A paid period (paid offers included, free trials and family sharing not) counts from its
/// purchase for the product's duration, so a renewal-date extension adds nothing; it is cut at
/// an upgrade or a prorated refund, and a full refund counts nothing. Overlapping periods count
/// once. A gap of more than 60 days between the end of paid service and the next paid purchase
/// restarts the count.
/// - Note: Stateless; `Sendable`.
public enum PaidServiceAccrual {
    /// A lapse longer than this restarts the count; one of exactly 60 days does not.
    public static let longestLapseKept: Int64 = 60 * CivilCalendar.millisecondsPerDay

    /// Milliseconds of paid service in the group before each paid auto-renewable transaction,
    /// by transaction id. `transactions` are the latest versions of one customer's transactions.
    public static func accruedBefore(_ transactions: [TransactionFact], catalog: ProductCatalog) -> [String: Int64] {
        var periodsByGroup: [String: [(start: Timestamp, end: Timestamp, transactionId: String)]] = [:]
        for transaction in transactions {
            // One catalog lookup per transaction: each is a hash of the product id.
            let product = catalog[transaction.productId]
            guard isPaidSubscriptionPeriod(transaction, product: product) else { continue }
            let group = transaction.subscriptionGroup ?? product?.subscriptionGroup ?? transaction.productId
            let end = paidEnd(of: transaction, product: product)
            periodsByGroup[group, default: []].append((transaction.purchaseDate, end, transaction.transactionId))
        }
        var accruedBefore: [String: Int64] = [:]
        accruedBefore.reserveCapacity(transactions.count)
        for group in periodsByGroup.keys.sorted() {
            // Distinct transactions, so the order is total; transactions in purchase order are in it.
            let periods = FactLedger.ordered(periodsByGroup[group]!) {
                $0.start != $1.start ? $0.start < $1.start : $0.transactionId < $1.transactionId
            }
            var accrued: Int64 = 0
            var coveredUntil: Timestamp?
            for period in periods {
                if let coveredUntil,
                    period.start.millisecondsSince1970 - coveredUntil.millisecondsSince1970 > longestLapseKept
                {
                    accrued = 0
                }
                accruedBefore[period.transactionId] = accrued
                let countedFrom = max(period.start, coveredUntil ?? period.start)
                accrued += max(0, period.end.millisecondsSince1970 - countedFrom.millisecondsSince1970)
                if period.end > period.start { coveredUntil = max(coveredUntil ?? period.end, period.end) }
            }
        }
        return accruedBefore
    }

    static func isAutoRenewable(_ transaction: TransactionFact, catalog: ProductCatalog) -> Bool {
        isAutoRenewable(transaction, product: catalog[transaction.productId])
    }

    /// The same, given the transaction's product as the catalog has it (nil when it has none).
    static func isAutoRenewable(_ transaction: TransactionFact, product: CatalogProduct?) -> Bool {
        (product?.kind ?? transaction.productKind) == .autoRenewable
    }

    static func isPaidSubscriptionPeriod(_ transaction: TransactionFact, product: CatalogProduct?) -> Bool {
        isAutoRenewable(transaction, product: product) && transaction.periodType != .trial
            && transaction.ownership != .familyShared && transaction.revocationType != .familyRevoke
    }

    /// Where the paid service bought by `transaction` ends (`product`: the catalog's, or nil).
    static func paidEnd(of transaction: TransactionFact, product: CatalogProduct?) -> Timestamp {
        let start = transaction.purchaseDate
        var end = transaction.expiresDate ?? start
        if let duration = product?.duration { end = min(end, duration.end(from: start)) }
        if let revokedAt = transaction.revocationDate {
            let fullRefund = !transaction.isUpgraded && transaction.revocationType != .refundProrated
            end = fullRefund ? start : min(end, max(start, revokedAt))
        }
        return end
    }
}
