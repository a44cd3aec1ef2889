import AppStoreModels

/// Computes `TransactionProceeds` for one customer's transactions: price from the transaction
/// (the catalog's reference price when it has none), the commission from `CommissionRule` with
/// the paid service of `PaidServiceAccrual`, and refunds (full, or prorated by Apple's
/// `revocationPercentage`). Each figure is rounded half away from zero to a milliunit.
/// - Note: Immutable value; `Sendable`.
public struct ProceedsCalculator: Sendable {
    public var rule: CommissionRule
    public var catalog: ProductCatalog

    public init(rule: CommissionRule, catalog: ProductCatalog) {
        self.rule = rule
        self.catalog = catalog
    }

    /// One result per transaction id, from its latest signed version, in purchase order.
    public func proceeds(of transactions: [TransactionFact]) -> [TransactionProceeds] {
        var latest: [String: TransactionFact] = [:]
        for transaction in transactions {
            if let known = latest[transaction.transactionId], known.signedDate >= transaction.signedDate { continue }
            latest[transaction.transactionId] = transaction
        }
        return proceeds(ofLatest: latest.values.sorted(by: FactLedger.byPurchase))
    }

    /// The same for transactions that are already each one's latest version, in purchase order
    /// (as `AnalyticsContribution` has them): nothing to deduplicate or sort again.
    func proceeds(ofLatest current: [TransactionFact]) -> [TransactionProceeds] {
        assert(
            zip(current, current.dropFirst()).allSatisfy(FactLedger.byPurchase),
            "not one latest version per transaction in purchase order")
        let accrued = PaidServiceAccrual.accruedBefore(current, catalog: catalog)
        return current.map { proceeds(of: $0, paidServiceBefore: accrued[$0.transactionId]) }
    }

    func proceeds(of transaction: TransactionFact, paidServiceBefore: Int64?) -> TransactionProceeds {
        let isFamilyShared = transaction.ownership == .familyShared || transaction.revocationType == .familyRevoke
        let isTrial = transaction.periodType == .trial
        let product = catalog[transaction.productId]
        let reference = product?.referencePrice
        let currency = transaction.currency ?? reference?.currency
        var gross: Int64 = 0
        if !isFamilyShared && !isTrial {
            gross = transaction.price ?? (transaction.currency == nil ? reference?.milliunits : nil) ?? 0
            gross *= Int64(max(1, transaction.quantity))
        }
        let commission =
            gross > 0
            ? rule.decision(
                storefront: transaction.storefront, purchaseDate: transaction.purchaseDate,
                paidServiceBefore: PaidServiceAccrual.isAutoRenewable(transaction, product: product)
                    ? (paidServiceBefore ?? 0) : nil)
            : CommissionRule.Decision(basisPoints: 0, reason: .nothingPaid)
        let proceeds = Self.scaled(gross, by: Int64(10_000 - commission.basisPoints), over: 10_000)
        var refundedAt: Timestamp?
        var refundReason: RefundReason?
        var refunded: Int64 = 0
        var refundedProceeds: Int64 = 0
        if let revocation = transaction.revocation, revocation.kind == .refund, !isFamilyShared {
            let share = Int64(revocation.refundPercentage ?? 100_000)
            refundedAt = revocation.revokedAt
            refundReason = revocation.refundReason
            refunded = Self.scaled(gross, by: share, over: 100_000)
            refundedProceeds = Self.scaled(proceeds, by: share, over: 100_000)
        }
        return TransactionProceeds(
            transactionId: transaction.transactionId, originalTransactionId: transaction.originalTransactionId,
            productId: transaction.productId,
            subscriptionGroup: transaction.subscriptionGroup ?? catalog[transaction.productId]?.subscriptionGroup,
            storefront: transaction.storefront, purchaseDate: transaction.purchaseDate, currency: currency,
            gross: gross, commission: commission, proceeds: proceeds, refundedAt: refundedAt,
            refundReason: refundReason, refunded: refunded, refundedProceeds: refundedProceeds,
            isFamilyShared: isFamilyShared, isTrial: isTrial)
    }

    /// `amount × numerator / denominator`, rounded half away from zero.
    static func scaled(_ amount: Int64, by numerator: Int64, over denominator: Int64) -> Int64 {
        Money(milliunits: amount, currency: "").scaled(by: numerator, over: denominator).milliunits
    }
}
