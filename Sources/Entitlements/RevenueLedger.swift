import AppStoreModels

/// Apple's money rules per transaction: price (catalog as fallback), commission, proceeds,
/// refunds.
///
/// Commission is 30 %, or 15 % for a Small Business Program app, or 15 % for an
/// auto-renewable subscription once the subscriber has accrued one year (365 days) of paid
/// service in the subscription group. Paid days accrue across upgrades, downgrades and
/// crossgrades in the group and across lapses of up to 60 days; a longer lapse restarts the
/// count (`PaidServiceAccrual`). Trials are not paid days, Family Sharing brings no revenue, a
/// full refund accrues no paid days and a prorated one accrues up to its revocation date.
struct RevenueLedger {
    static let oneYearOfPaidService: Int64 = 365 * CivilCalendar.millisecondsPerDay

    private(set) var revenueByTransactionId: [String: TransactionRevenue] = [:]

    /// `accruedBefore`: `PaidServiceAccrual`'s paid service before each paid auto-renewable
    /// transaction, the one reading analytics' proceeds use too.
    init(transactions: [TransactionFact], accruedBefore: [String: Int64], catalog: ProductCatalog) {
        // Sized up front: grown one transaction at a time, the table rehashed every id in it at
        // each doubling (a long history's profile showed it).
        revenueByTransactionId.reserveCapacity(transactions.count)
        for transaction in transactions {
            let product = catalog[transaction.productId]
            let currency = transaction.currency ?? product?.referencePrice?.currency ?? "XXX"
            let price: Money?
            let pricing: Pricing
            if transaction.ownership == .familyShared {
                price = Money(milliunits: 0, currency: currency)
                pricing = .familyShared
            } else if let paid = transaction.price {
                price = Money(milliunits: paid, currency: currency)
                pricing = transaction.periodType == .trial ? .trial : .fromTransaction
            } else if let reference = product?.referencePrice {
                price = reference
                pricing = .fromCatalog
            } else {
                price = nil
                pricing = .unknown
            }
            let accrued = accruedBefore[transaction.transactionId]
            let commission: Commission
            if (price?.milliunits ?? 0) <= 0 {
                commission = .none
            } else if catalog.isSmallBusinessProgram {
                commission = .smallBusinessProgram
            } else if let accrued, accrued >= Self.oneYearOfPaidService {
                commission = .afterOneYear
            } else {
                commission = .standard
            }
            var reason = Self.reasons[pricing.rawValue][commission.rawValue]
            let proceeds = price.map { $0.scaled(by: Int64(100 - commission.percent), over: 100) }
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
                purchaseDate: transaction.purchaseDate, price: price, commissionPercent: commission.percent,
                proceeds: proceeds, refunded: refunded, netProceeds: net,
                paidServiceDaysBefore: accrued.map { Int($0 / CivilCalendar.millisecondsPerDay) }, reason: reason)
        }
    }

    subscript(transactionId: String) -> TransactionRevenue? { revenueByTransactionId[transactionId] }

    /// Where a transaction's price came from.
    enum Pricing: Int, CaseIterable {
        case familyShared, trial, fromTransaction, fromCatalog, unknown

        var reason: String {
            switch self {
            case .familyShared: "family shared: no revenue"
            case .trial: "free trial"
            case .fromTransaction: "price from the transaction"
            case .fromCatalog: "price from the catalog (the transaction has none)"
            case .unknown: "no price known"
            }
        }
    }

    /// Apple's commission on a transaction, and why.
    enum Commission: Int, CaseIterable {
        case none, smallBusinessProgram, afterOneYear, standard

        var percent: Int {
            switch self {
            case .none: 0
            case .smallBusinessProgram, .afterOneYear: 15
            case .standard: 30
            }
        }

        var reason: String? {
            switch self {
            case .none: nil
            case .smallBusinessProgram: "15 % commission: Small Business Program"
            case .afterOneYear: "15 % commission: over one year of paid service in the group"
            case .standard: "30 % commission"
            }
        }
    }

    /// The reasons of transactions without a refund, by pricing and commission, joined once:
    /// joined for each transaction, they were an allocation and a copy per transaction of a long
    /// history at every evaluation.
    static let reasons: [[String]] = Pricing.allCases.map { pricing in
        Commission.allCases.map { commission in
            commission.reason.map { pricing.reason + "; " + $0 } ?? pricing.reason
        }
    }
}
