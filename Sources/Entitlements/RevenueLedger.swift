import AppStoreModels

/// Apple's money rules per transaction: price (catalog as fallback), commission, proceeds,
/// refunds.
///
/// Commission is 30 %, or 15 % for a Small Business Program app, or 15 % for an
/// auto-renewable subscription once the subscriber has accrued one year (365 days) of paid
/// service in the subscription group. Paid days accrue across upgrades, downgrades and
/// crossgrades in the group and across lapses of up to 60 days; a longer lapse restarts the
/// count. Trials are not paid days, Family Sharing brings no revenue, a full refund accrues no
/// paid days and a prorated one accrues up to its revocation date.
struct RevenueLedger {
    static let oneYearOfPaidService: Int64 = 365 * CivilCalendar.millisecondsPerDay
    static let lapseThatResetsPaidService: Int64 = 60 * CivilCalendar.millisecondsPerDay

    /// One auto-renewable period eligible to accrue paid service.
    struct PaidPeriod {
        var transaction: TransactionFact
        /// Where paid service of this period ends (upgrade, refund or expiry).
        var paidEnd: Timestamp
        var group: String
    }

    private(set) var revenueByTransactionId: [String: TransactionRevenue] = [:]

    init(transactions: [TransactionFact], paidPeriods: [PaidPeriod], catalog: ProductCatalog) {
        var accruedBefore: [String: Int64] = [:]
        var periodsByGroup: [String: [PaidPeriod]] = [:]
        for period in paidPeriods { periodsByGroup[period.group, default: []].append(period) }
        for group in periodsByGroup.keys.sorted() {
            // Indices are sorted, not the periods (each holds a whole transaction), and only
            // when they are out of order: one chain's periods come in purchase order.
            let unsorted = periodsByGroup[group]!
            let periods =
                zip(unsorted, unsorted.dropFirst()).allSatisfy { FactLedger.byPurchase($0.transaction, $1.transaction) }
                ? unsorted
                : unsorted.indices.sorted { FactLedger.byPurchase(unsorted[$0].transaction, unsorted[$1].transaction) }
                    .map { unsorted[$0] }
            var accrued: Int64 = 0
            var coveredUntil: Timestamp?
            for period in periods {
                let start = period.transaction.purchaseDate
                if let coveredUntil,
                    start.millisecondsSince1970 - coveredUntil.millisecondsSince1970 > Self.lapseThatResetsPaidService
                {
                    accrued = 0
                }
                accruedBefore[period.transaction.transactionId] = accrued
                // Overlaps (a renewal charged before the previous expiry, an upgrade) count once.
                let countedFrom = max(start, coveredUntil ?? start)
                accrued += max(0, period.paidEnd.millisecondsSince1970 - countedFrom.millisecondsSince1970)
                coveredUntil = max(coveredUntil ?? period.paidEnd, period.paidEnd)
            }
        }

        for transaction in transactions {
            let product = catalog[transaction.productId]
            let currency = transaction.currency ?? product?.referencePrice?.currency ?? "XXX"
            let price: Money?
            var reason: String
            if transaction.ownership == .familyShared {
                price = Money(milliunits: 0, currency: currency)
                reason = "family shared: no revenue"
            } else if let paid = transaction.price {
                price = Money(milliunits: paid, currency: currency)
                reason = transaction.periodType == .trial ? "free trial" : "price from the transaction"
            } else if let reference = product?.referencePrice {
                price = reference
                reason = "price from the catalog (the transaction has none)"
            } else {
                price = nil
                reason = "no price known"
            }
            let accrued = accruedBefore[transaction.transactionId]
            let commission: Int
            if (price?.milliunits ?? 0) <= 0 {
                commission = 0
            } else if catalog.isSmallBusinessProgram {
                commission = 15
                reason += "; 15 % commission: Small Business Program"
            } else if let accrued, accrued >= Self.oneYearOfPaidService {
                commission = 15
                reason += "; 15 % commission: over one year of paid service in the group"
            } else {
                commission = 30
                reason += "; 30 % commission"
            }
            let proceeds = price.map { $0.scaled(by: Int64(100 - commission), over: 100) }
            var refunded: Money?
            var net = proceeds
            if let revocation = transaction.revocation, revocation.kind == .refund, let price, let proceeds {
                let share = Int64(revocation.refundPercentage ?? 100_000)
                refunded = price.scaled(by: share, over: 100_000)
                net = Money(
                    milliunits: proceeds.milliunits - proceeds.scaled(by: share, over: 100_000).milliunits,
                    currency: proceeds.currency)
                reason += "; refunded \(share == 100_000 ? "in full" : "in part")"
            }
            revenueByTransactionId[transaction.transactionId] = TransactionRevenue(
                transactionId: transaction.transactionId, productId: transaction.productId,
                purchaseDate: transaction.purchaseDate, price: price, commissionPercent: commission,
                proceeds: proceeds, refunded: refunded, netProceeds: net,
                paidServiceDaysBefore: accrued.map { Int($0 / CivilCalendar.millisecondsPerDay) }, reason: reason)
        }
    }

    subscript(transactionId: String) -> TransactionRevenue? { revenueByTransactionId[transactionId] }
}
