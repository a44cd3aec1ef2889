import AppStoreModels

/// Makes events with the fields every event shares (customer, environment, entitlements,
/// money) so that the evaluators only say what happened and why.
struct LifecycleEventBuilder {
    let customerId: String
    let environment: AppStoreEnvironment
    let catalog: ProductCatalog
    let revenue: RevenueLedger
    /// The entitlement ids of the customer's products, sorted once: every event carries them, and
    /// sorting them again for each event of a long history showed in its profile. Only the
    /// products of `productIds`, so a large catalog costs a short history nothing; any other
    /// (a product a renewal info names) is sorted when asked for.
    private let sortedEntitlementIds: [String: [String]]

    init(
        customerId: String, environment: AppStoreEnvironment, catalog: ProductCatalog, revenue: RevenueLedger,
        productIds: Set<String>
    ) {
        self.customerId = customerId
        self.environment = environment
        self.catalog = catalog
        self.revenue = revenue
        var sorted: [String: [String]] = [:]
        for productId in productIds { sorted[productId] = Self.entitlementIds(of: productId, in: catalog) }
        sortedEntitlementIds = sorted
    }

    func entitlementIds(of productId: String) -> [String] {
        sortedEntitlementIds[productId] ?? Self.entitlementIds(of: productId, in: catalog)
    }

    private static func entitlementIds(of productId: String, in catalog: ProductCatalog) -> [String] {
        guard let product = catalog[productId], product.kind != .consumable else { return [] }
        return product.entitlementIds.sorted()
    }

    /// `id` is `<TYPE>/<cause key>`: the cause key names the transaction or renewal period and,
    /// for repeatable causes, an ordinal, never an arrival time.
    func event(
        _ type: LifecycleEventType, key: String, at occurredAt: Timestamp, transaction: TransactionFact,
        productId: String? = nil, money: MoneySign = .none, summary: String
    ) -> LifecycleEvent {
        var event = LifecycleEvent(
            id: "\(type.rawValue)/\(key)", type: type, customerId: customerId, environment: environment,
            occurredAt: occurredAt, productId: productId ?? transaction.productId,
            entitlementIds: entitlementIds(of: productId ?? transaction.productId),
            transactionId: transaction.transactionId, originalTransactionId: transaction.originalTransactionId,
            periodType: transaction.periodType, summary: summary)
        if let figures = revenue[transaction.transactionId] { Self.apply(money, of: figures, to: &event) }
        return event
    }

    /// Which money figures an event carries; each paid transaction's money appears on exactly
    /// one purchase-type event, refunds subtract it and reversals add it back.
    enum MoneySign {
        case none
        case charged
        /// Share in thousandths of a percent.
        case refunded(Int32)
        case restored(Int32)
    }

    /// Refund, reversal, Family Sharing revocation and renewal-date extension events read from
    /// the signed versions of one transaction (Apple re-signs a transaction for each).
    func versionEvents(_ versions: [TransactionFact]) -> [LifecycleEvent] {
        var events: [LifecycleEvent] = []
        var previous: TransactionFact?
        for version in versions {
            let wasRevoked = previous?.isRevokedOtherThanByUpgrade ?? false
            if let revocation = version.revocation, !wasRevoked {
                // Named by the instant of the revocation, not by how many came before: a version
                // arriving late cannot rename a refund already reported.
                let key = "\(version.transactionId)/\(revocation.revokedAt.millisecondsSince1970)"
                if revocation.kind == .familySharingRevoked {
                    var event = self.event(
                        .familySharingRevoked, key: key, at: revocation.revokedAt, transaction: version,
                        summary: revocation.text)
                    event.refundReason = nil
                    events.append(event)
                } else {
                    var event = self.event(
                        .refund, key: key, at: revocation.revokedAt, transaction: version,
                        money: .refunded(revocation.refundPercentage ?? 100_000), summary: revocation.text)
                    event.refundReason = revocation.refundReason
                    events.append(event)
                }
            } else if wasRevoked, !version.isRevokedOtherThanByUpgrade, let earlier = previous?.revocation,
                earlier.kind == .refund
            {
                // A Family Sharing revocation is not reversed in place: re-sharing makes a new
                // transaction, which reports itself as a purchase.
                events.append(
                    event(
                        .refundReversed, key: "\(version.transactionId)/\(version.signedDate.millisecondsSince1970)",
                        at: version.signedDate,
                        transaction: version, money: .restored(earlier.refundPercentage ?? 100_000),
                        summary: "refund reversed \(version.signedDate.humanReadable): access restored"))
            }
            if let previous, let expires = version.expiresDate, let before = previous.expiresDate, expires > before,
                version.purchaseDate == previous.purchaseDate
            {
                var event = self.event(
                    .subscriptionExtended, key: "\(version.transactionId)/\(expires.millisecondsSince1970)",
                    at: version.signedDate, transaction: version,
                    summary: "renewal date extended from \(before.humanReadable) to \(expires.humanReadable)")
                event.expiresDate = expires
                events.append(event)
            }
            previous = version
        }
        return events
    }
}

extension LifecycleEventBuilder {
    /// An event of a Google Play purchase: `transactionId` is the order id (one per charge),
    /// `originalTransactionId` the purchase token, money from `figures` as `money` says.
    func playEvent(
        _ type: LifecycleEventType, key: String, at occurredAt: Timestamp, productId: String, orderId: String?,
        purchaseToken: String, periodType: PeriodType?, figures: TransactionRevenue?, money: MoneySign = .none,
        summary: String
    ) -> LifecycleEvent {
        var event = LifecycleEvent(
            id: "\(type.rawValue)/\(key)", type: type, customerId: customerId, environment: environment,
            occurredAt: occurredAt, productId: productId, entitlementIds: entitlementIds(of: productId),
            transactionId: orderId ?? purchaseToken, originalTransactionId: purchaseToken, periodType: periodType,
            summary: summary)
        event.store = .playStore
        if let figures { Self.apply(money, of: figures, to: &event) }
        return event
    }

    /// Puts a transaction's money on its event as `money` says: charged as it was, or a share
    /// (in thousandths of a percent) taken back by a refund or given back by its reversal.
    static func apply(_ money: MoneySign, of figures: TransactionRevenue, to event: inout LifecycleEvent) {
        switch money {
        case .none: break
        case .charged:
            event.price = figures.price
            event.commissionPercent = figures.commissionPercent
            event.proceeds = figures.proceeds
        case .refunded(let share), .restored(let share):
            let sign: Int64 = if case .refunded = money { -1 } else { 1 }
            event.price = figures.price.map { $0.scaled(by: sign * Int64(share), over: 100_000) }
            event.commissionPercent = figures.commissionPercent
            event.proceeds = figures.proceeds.map { $0.scaled(by: sign * Int64(share), over: 100_000) }
        }
    }
}
