import AppStoreModels

/// The money of one Play charge (an order): price (Google's recurring price, or the
/// catalog's), Google's service fee from `PlayCommissionRule`, proceeds, and a refund.
///
/// When the orders API was read for the order (`order`, with a developer revenue), the
/// proceeds are Google's exact figure instead of the rule's estimate; the price stays the one
/// shown (the order's total less tax when the shown price is in another currency or missing),
/// and the fee is what lies between them.
enum PlayRevenue {
    static func figures(
        orderId: String, productId: String, purchaseDate: Timestamp, shownPrice: Money?, quantity: Int,
        isAutoRenewing: Bool, isTrial: Bool, isPaid: Bool, refundShare: Int32?, catalog: ProductCatalog,
        rule: PlayCommissionRule, order: PlayOrderFact? = nil
    ) -> TransactionRevenue {
        if let order, let exact = order.developerRevenue, isPaid, !isTrial {
            return exactFigures(
                orderId: orderId, productId: productId, purchaseDate: purchaseDate, shownPrice: shownPrice,
                quantity: quantity, refundShare: refundShare, catalog: catalog, order: order, exact: exact)
        }
        let reference = catalog[productId]?.referencePrice
        var price: Money?
        var reason: String
        if isTrial || !isPaid {
            price = Money(milliunits: 0, currency: shownPrice?.currency ?? reference?.currency ?? "XXX")
            reason = isTrial ? "free trial" : "promo or rewarded: no revenue"
        } else if let shownPrice {
            price = shownPrice.scaled(by: Int64(max(1, quantity)), over: 1)
            reason = "price shown by Google Play"
        } else if let reference {
            price = reference.scaled(by: Int64(max(1, quantity)), over: 1)
            reason = "price from the catalog (Google Play showed none)"
        } else {
            price = nil
            reason = "no price known"
        }
        let decision = rule.decision(
            isAutoRenewing: isAutoRenewing, purchaseDate: purchaseDate, isPaid: (price?.milliunits ?? 0) > 0)
        switch decision.reason {
        case .autoRenewingSubscription: reason += "; 15 % service fee: auto-renewing subscription"
        case .firstMillionOfTheYear: reason += "; 15 % service fee: within the first 1M USD of the year"
        case .aboveMillionOfTheYear: reason += "; 30 % service fee: above 1M USD this year"
        case .notEnrolled: reason += "; 30 % service fee: not enrolled in the 15 % tier"
        case .nothingPaid: break
        }
        let proceeds = price.map { $0.scaled(by: Int64(10_000 - decision.basisPoints), over: 10_000) }
        var refunded: Money?
        var net = proceeds
        if let share = refundShare, let price, let proceeds {
            refunded = price.scaled(by: Int64(share), over: 100_000)
            net = Money(
                milliunits: proceeds.milliunits - proceeds.scaled(by: Int64(share), over: 100_000).milliunits,
                currency: proceeds.currency)
            reason += "; refunded \(share == 100_000 ? "in full" : "in part")"
        }
        var figures = TransactionRevenue(
            transactionId: orderId, productId: productId, purchaseDate: purchaseDate, price: price,
            commissionPercent: decision.basisPoints / 100, proceeds: proceeds, refunded: refunded, netProceeds: net,
            paidServiceDaysBefore: nil, reason: reason)
        figures.store = .playStore
        return figures
    }

    /// The figures of an order the orders API gave a developer revenue for.
    private static func exactFigures(
        orderId: String, productId: String, purchaseDate: Timestamp, shownPrice: Money?, quantity: Int,
        refundShare: Int32?, catalog: ProductCatalog, order: PlayOrderFact, exact: Money
    ) -> TransactionRevenue {
        let units = Int64(max(1, quantity))
        var price: Money?
        var reason: String
        if let shownPrice, shownPrice.currency == exact.currency {
            price = shownPrice.scaled(by: units, over: 1)
            reason = "price shown by Google Play"
        } else if let total = order.total, total.currency == exact.currency {
            price = Money(milliunits: total.milliunits - (order.tax?.milliunits ?? 0), currency: total.currency)
            reason = "price from the orders API (total less tax)"
        } else if let reference = catalog[productId]?.referencePrice, reference.currency == exact.currency {
            price = reference.scaled(by: units, over: 1)
            reason = "price from the catalog"
        } else {
            price = nil
            reason = "no price known in the revenue's currency"
        }
        reason += "; exact developer revenue from the orders API"
        var commissionPercent = 0
        if let price, price.milliunits > 0 {
            commissionPercent = Int(
                Money.scaledExactly(price.milliunits - exact.milliunits, by: 100, over: price.milliunits) ?? 0)
        }
        var refunded: Money?
        var net = exact
        if let share = refundShare {
            refunded = price?.scaled(by: Int64(share), over: 100_000)
            net = Money(
                milliunits: exact.milliunits - exact.scaled(by: Int64(share), over: 100_000).milliunits,
                currency: exact.currency)
            reason += "; refunded \(share == 100_000 ? "in full" : "in part")"
        }
        var figures = TransactionRevenue(
            transactionId: orderId, productId: productId, purchaseDate: purchaseDate, price: price,
            commissionPercent: commissionPercent, proceeds: exact, refunded: refunded, netProceeds: net,
            paidServiceDaysBefore: nil, reason: reason)
        figures.store = .playStore
        return figures
    }
}
