import AppStoreModels
import Entitlements
import GooglePlayModels

/// Google's wire types (`GooglePlayModels`) into the engine's Play facts (`Entitlements`).
///
/// The wire types leave every field optional because Google omits what does not apply; the
/// facts need a few of them: a refusal names the missing field (`invalidTransaction`), so a
/// malformed answer is never half-ingested. The purchase token, package name and product id
/// come from the request that was answered (Google does not repeat them in a subscription).
/// Unknown enumeration values are kept as sent (`RawEnum`), never dropped.
public enum PlayFactMapping {
    /// `purchases.subscriptionsv2.get` for `purchaseToken`, read at `readAt`.
    public static func subscription(
        _ purchase: SubscriptionPurchaseV2, packageName: String, purchaseToken: String, readAt: Timestamp
    ) throws(IngestionError) -> PlaySubscriptionFact {
        guard let state = purchase.subscriptionState else {
            throw IngestionError(.invalidTransaction, "The Google Play subscription has no subscriptionState.")
        }
        var lineItems: [PlaySubscriptionLineItem] = []
        for (index, item) in (purchase.lineItems ?? []).enumerated() {
            guard let productId = item.productId, !productId.isEmpty else {
                throw IngestionError(
                    .invalidTransaction, "The Google Play subscription's lineItems[\(index)] has no productId.")
            }
            lineItems.append(
                PlaySubscriptionLineItem(
                    productId: productId, expiryTime: item.expiryTime.map(timestamp),
                    autoRenewEnabled: item.autoRenewingPlan.map { $0.autoRenewEnabled ?? false },
                    planType: planType(item), basePlanId: item.offerDetails?.basePlanId,
                    offerId: item.offerDetails?.offerId, offerPhase: item.offerPhase.flatMap(offerPhase),
                    latestSuccessfulOrderId: item.latestSuccessfulOrderId,
                    recurringPrice: try item.autoRenewingPlan?.recurringPrice.map(money)))
        }
        let cancel = cancellation(purchase.canceledStateContext)
        return PlaySubscriptionFact(
            packageName: packageName, purchaseToken: purchaseToken, readAt: readAt,
            state: RawEnum(rawValue: state.rawValue), startTime: purchase.startTime.map(timestamp),
            lineItems: lineItems, isAcknowledged: purchase.acknowledgementState == AcknowledgementState.acknowledged,
            linkedPurchaseToken: purchase.linkedPurchaseToken.flatMap { $0.isEmpty ? nil : $0 },
            cancelReason: cancel.reason, canceledAt: cancel.at,
            autoResumeTime: purchase.pausedStateContext?.autoResumeTime.map(timestamp),
            isTestPurchase: purchase.testPurchase != nil,
            obfuscatedAccountId: purchase.externalAccountIdentifiers?.obfuscatedExternalAccountId,
            obfuscatedProfileId: purchase.externalAccountIdentifiers?.obfuscatedExternalProfileId,
            externalAccountId: purchase.externalAccountIdentifiers?.externalAccountId,
            regionCode: purchase.regionCode)
    }

    /// `purchases.products.get` for (`productId`, `purchaseToken`), read at `readAt`.
    public static func product(
        _ purchase: ProductPurchase, packageName: String, productId: String, purchaseToken: String,
        readAt: Timestamp
    ) throws(IngestionError) -> PlayProductPurchaseFact {
        guard let purchaseTime = purchase.purchaseTimeMillis else {
            throw IngestionError(.invalidTransaction, "The Google Play product purchase has no purchaseTimeMillis.")
        }
        guard let state = purchase.purchaseState else {
            throw IngestionError(.invalidTransaction, "The Google Play product purchase has no purchaseState.")
        }
        let quantity = Int(purchase.quantity ?? 1)
        guard quantity > 0 else {
            throw IngestionError(.invalidTransaction, "The Google Play product purchase has a quantity below 1.")
        }
        return PlayProductPurchaseFact(
            packageName: packageName, purchaseToken: purchaseToken, productId: productId,
            orderId: purchase.orderId.flatMap { $0.isEmpty ? nil : $0 }, readAt: readAt,
            purchaseTime: Timestamp(millisecondsSince1970: purchaseTime.milliseconds),
            purchaseState: RawEnum(rawValue: Int(state.rawValue)),
            isConsumed: purchase.consumptionState == ProductConsumptionState.consumed,
            isAcknowledged: purchase.acknowledgementState == ProductAcknowledgementState.acknowledged,
            quantity: quantity, purchaseType: purchase.purchaseType.map { Int($0.rawValue) },
            obfuscatedAccountId: purchase.obfuscatedExternalAccountId,
            obfuscatedProfileId: purchase.obfuscatedExternalProfileId, regionCode: purchase.regionCode)
    }

    /// One entry of `purchases.voidedpurchases.list`. The list does not say the product type
    /// (the caller knows which token it is; `nil` for a token never read) nor the refund type: a
    /// `voidedQuantity` means a quantity-based partial refund, its absence a full one.
    public static func voided(
        _ purchase: VoidedPurchase, packageName: String, productType: PlayProductType?, isTestPurchase: Bool = false
    ) throws(IngestionError) -> PlayVoidedPurchaseFact {
        guard let token = purchase.purchaseToken, !token.isEmpty else {
            throw IngestionError(.invalidTransaction, "The voided purchase has no purchaseToken.")
        }
        guard let voidedAt = purchase.voidedTimeMillis else {
            throw IngestionError(.invalidTransaction, "The voided purchase has no voidedTimeMillis.")
        }
        let partial = purchase.voidedQuantity != nil
        return PlayVoidedPurchaseFact(
            packageName: packageName, purchaseToken: token, orderId: purchase.orderId, productType: productType,
            voidedAt: Timestamp(millisecondsSince1970: voidedAt.milliseconds),
            voidedSource: purchase.voidedSource.map { Int($0.rawValue) },
            voidedReason: purchase.voidedReason.map { Int($0.rawValue) },
            refundType: partial ? .quantityBasedPartial : .full, voidedQuantity: purchase.voidedQuantity.map(Int.init),
            isTestPurchase: isTestPurchase)
    }

    /// A `voidedPurchaseNotification`: voided at the notification's `eventTimeMillis`; who and
    /// why are not in it (the voided-purchases list tells them later).
    public static func voided(
        _ notification: VoidedPurchaseNotification, packageName: String, eventTime: EpochMillisString,
        isTestPurchase: Bool = false
    ) throws(IngestionError) -> PlayVoidedPurchaseFact {
        guard let productType = PlayProductType(rawValue: Int(notification.productType.rawValue)) else {
            throw IngestionError(
                .invalidNotification,
                "The voided purchase notification has an unknown productType \(notification.productType.rawValue).")
        }
        guard let refundType = PlayRefundType(rawValue: Int(notification.refundType.rawValue)) else {
            throw IngestionError(
                .invalidNotification,
                "The voided purchase notification has an unknown refundType \(notification.refundType.rawValue).")
        }
        return PlayVoidedPurchaseFact(
            packageName: packageName, purchaseToken: notification.purchaseToken,
            orderId: notification.orderId.isEmpty ? nil : notification.orderId, productType: productType,
            voidedAt: Timestamp(millisecondsSince1970: eventTime.milliseconds), voidedSource: nil, voidedReason: nil,
            refundType: refundType, isTestPurchase: isTestPurchase)
    }

    /// A `SUBSCRIPTION_REVOKED` notification: a full refund of the subscription at the event time.
    public static func revocation(
        _ notification: SubscriptionNotification, packageName: String, eventTime: EpochMillisString,
        orderId: String?, isTestPurchase: Bool
    ) -> PlayVoidedPurchaseFact {
        PlayVoidedPurchaseFact(
            packageName: packageName, purchaseToken: notification.purchaseToken, orderId: orderId,
            productType: .subscription, voidedAt: Timestamp(millisecondsSince1970: eventTime.milliseconds),
            voidedSource: nil, voidedReason: nil, refundType: .full, isTestPurchase: isTestPurchase)
    }

    // MARK: - Parts

    /// `orders.get` of `orderId`, for the purchase `purchaseToken` whose test flag it takes, read
    /// at `readAt`. The answer must name the order asked for; its amounts are read as prices
    /// are (`money`), a missing developer revenue left `nil` (the estimate stays).
    public static func order(
        _ order: Order, packageName: String, orderId: String, purchaseToken: String, isTestPurchase: Bool,
        readAt: Timestamp
    ) throws(IngestionError) -> PlayOrderFact {
        guard order.orderId == nil || order.orderId == orderId else {
            throw IngestionError(.invalidTransaction, "The Google Play order answer names another order.")
        }
        if let token = order.purchaseToken, !token.isEmpty, token != purchaseToken {
            throw IngestionError(.invalidTransaction, "The Google Play order belongs to another purchase token.")
        }
        return PlayOrderFact(
            packageName: packageName, orderId: orderId, purchaseToken: purchaseToken, readAt: readAt,
            isTestPurchase: isTestPurchase, state: order.state?.rawValue, total: try order.total.map(money),
            tax: try order.tax.map(money), developerRevenue: try order.developerRevenueInBuyerCurrency.map(money))
    }

    static func timestamp(_ time: GoogleDateTime) -> Timestamp {
        Timestamp(millisecondsSince1970: time.milliseconds)
    }

    static func planType(_ item: SubscriptionPurchaseLineItem) -> PlayPlanType {
        if item.prepaidPlan != nil { return .prepaid }
        if item.autoRenewingPlan?.installmentDetails != nil { return .installment }
        return .autoRenewing
    }

    /// A proration period is its own phase; the one it stands for is not what is charged now.
    static func offerPhase(_ phase: OfferPhase) -> PlayOfferPhase? {
        if phase.freeTrial != nil { return .freeTrial }
        if phase.introductoryPrice != nil { return .introductoryPrice }
        if phase.prorationPeriod != nil { return .prorationPeriod }
        if phase.basePrice != nil { return .basePrice }
        return nil
    }

    /// Google's `Money` (`units` + `nanos`, both of one sign) in the engine's milliunits,
    /// computed in integers from the parts themselves: 9.99 (`units` "9", `nanos` 990000000,
    /// 9,990,000 micros) is exactly 9990. A price finer than a thousandth (which no Play price
    /// list produces) is rounded half away from zero, as every other amount in the engine.
    static func money(_ value: GooglePlayModels.Money) throws(IngestionError) -> Entitlements.Money {
        let units = value.units ?? "0"
        let nanos = Int64(value.nanos ?? 0)
        // Google's rule: nanos within ±999,999,999 and of the sign of units.
        guard let currency = value.currencyCode, currency.utf8.count == 3, units.utf8.count <= 20,
            let whole = Int64(units), abs(nanos) < 1_000_000_000, whole == 0 || nanos == 0 || (whole < 0) == (nanos < 0)
        else {
            throw IngestionError(.invalidTransaction, "A Google Play price has no currency or an unreadable amount.")
        }
        let (thousandths, overflow) = whole.multipliedReportingOverflow(by: 1000)
        let fraction = (abs(nanos) + 500_000) / 1_000_000
        let (total, overflowed) = thousandths.addingReportingOverflow(nanos < 0 ? -fraction : fraction)
        guard !overflow, !overflowed else {
            throw IngestionError(.invalidTransaction, "A Google Play price is too large.")
        }
        return Entitlements.Money(milliunits: total, currency: currency)
    }

    static func cancellation(_ context: CanceledStateContext?) -> (reason: PlayCancelReason?, at: Timestamp?) {
        guard let context else { return (nil, nil) }
        if let user = context.userInitiatedCancellation { return (.user, user.cancelTime.map(timestamp)) }
        if context.systemInitiatedCancellation != nil { return (.system, nil) }
        if context.developerInitiatedCancellation != nil { return (.developer, nil) }
        if context.replacementCancellation != nil { return (.replacement, nil) }
        return (nil, nil)
    }
}
