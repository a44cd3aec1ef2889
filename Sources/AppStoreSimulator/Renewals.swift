import AppStoreModels
import Foundation

/// The store's own clockwork: renewals at the expiry date, billing failures with grace period
/// and billing retry, recovery, and expiry, each with the notification Apple sends.
extension StoreState {
    /// Runs every event due at or before `now`, oldest first, at the instant it was due (a
    /// renewal's purchase date is the previous expiry, however late the clock looks).
    /// Notifications are signed at `now`.
    mutating func processDueEvents(now: Timestamp) {
        // Bounded: each event either ends a subscription's lifecycle step or moves its expiry
        // forward by at least one period; a cap guards against a zero-length period.
        for _ in 0..<100_000 {
            guard let (id, due) = nextDueEvent(), due <= now else { return }
            guard var subscription = subscriptions[id] else { return }
            switch subscription.status {
            case .active:
                renewOrEnd(&subscription, at: due, now: now)
            case .billingGracePeriod where subscription.gracePeriodExpiresDate == due:
                subscription.status = .billingRetry
                subscriptions[id] = subscription
                emit(.gracePeriodExpired, transactionId: subscription.latestTransactionId, now: now)
                mirrorToFamily(subscription, .gracePeriodExpired, nil, newTransaction: nil, now: now)
            default:
                expire(&subscription, .billingRetry, intent: .billingError, now: now)
            }
        }
    }

    /// The earliest pending event among purchasers' subscriptions (family copies follow them).
    func nextDueEvent() -> (String, Timestamp)? {
        var best: (String, Timestamp)?
        for subscription in subscriptions.values where subscription.familySource == nil {
            let due: Timestamp?
            switch subscription.status {
            case .active: due = subscription.expiresDate
            case .billingGracePeriod:
                due = [subscription.gracePeriodExpiresDate, subscription.billingRetryEndsAt].compactMap { $0 }.min()
            case .billingRetry: due = subscription.billingRetryEndsAt
            default: due = nil
            }
            guard let due else { continue }
            if best == nil || due < best!.1 || (due == best!.1 && subscription.originalTransactionId < best!.0) {
                best = (subscription.originalTransactionId, due)
            }
        }
        return best
    }

    private mutating func renewOrEnd(_ subscription: inout SubscriptionRecord, at due: Timestamp, now: Timestamp) {
        guard let app = apps[subscription.bundleId] else { return }
        if !subscription.autoRenew {
            expire(&subscription, .voluntary, intent: .customerCancelled, now: now)
        } else if subscription.priceIncreaseStatus == .customerHasNotResponded {
            expire(&subscription, .priceIncrease, intent: .customerDidNotConsentToPriceIncrease, now: now)
        } else if app.product(subscription.autoRenewProductId) == nil {
            expire(&subscription, .productNotForSale, intent: .productNotAvailable, now: now)
        } else if customers[subscription.customerId]?.billingFails == true {
            subscription.expirationIntent = .billingError
            subscription.billingRetryEndsAt = due.adding(
                milliseconds: scale.milliseconds(days: Double(app.billingRetryDays)))
            if let grace = app.gracePeriodDays {
                subscription.status = .billingGracePeriod
                subscription.gracePeriodExpiresDate = due.adding(milliseconds: scale.milliseconds(days: Double(grace)))
                subscriptions[subscription.originalTransactionId] = subscription
                emit(.didFailToRenew, .gracePeriod, transactionId: subscription.latestTransactionId, now: now)
                mirrorToFamily(subscription, .didFailToRenew, .gracePeriod, newTransaction: nil, now: now)
            } else {
                subscription.status = .billingRetry
                subscriptions[subscription.originalTransactionId] = subscription
                emit(.didFailToRenew, transactionId: subscription.latestTransactionId, now: now)
                mirrorToFamily(subscription, .didFailToRenew, nil, newTransaction: nil, now: now)
            }
        } else {
            renew(&subscription, purchaseDate: due, subtype: nil, now: now)
        }
    }

    /// Charges the next period starting at `purchaseDate`.
    mutating func renew(
        _ subscription: inout SubscriptionRecord, purchaseDate: Timestamp, subtype: Subtype?, now: Timestamp
    ) {
        guard let app = apps[subscription.bundleId], let product = app.product(subscription.autoRenewProductId),
            let customer = customers[subscription.customerId]
        else { return }
        var duration = product.period ?? .month
        var price = product.prices.price(for: subscription.storefront)
        var applied: AppliedOffer?
        if var pending = subscription.renewalOffer, pending.remaining > 0 {
            applied = pending.offer
            if pending.offer.discountType == .freeTrial {
                price = price.map { Price(storefront: $0.storefront, currency: $0.currency, price: 0) }
            } else {
                price = pending.prices.price(for: subscription.storefront) ?? price
            }
            if pending.offer.discountType != .payAsYouGo { duration = pending.offer.period }
            pending.remaining -= 1
            subscription.renewalOffer = pending.remaining > 0 ? pending : nil
        }
        let id = nextNumericId()
        let expires = scale.adding(duration, to: purchaseDate)
        let original = transactions[subscription.originalTransactionId]
        let transaction = record(
            TransactionRecord(
                transactionId: id, originalTransactionId: subscription.originalTransactionId,
                webOrderLineItemId: nextNumericId(), bundleId: app.bundleId, customerId: customer.id,
                productId: product.productId, kind: .autoRenewable, groupId: subscription.groupId,
                purchaseDate: purchaseDate, originalPurchaseDate: original?.originalPurchaseDate ?? purchaseDate,
                expiresDate: expires, quantity: 1, appAccountToken: subscription.appAccountToken, ownership: .purchased,
                isUpgraded: false, offer: applied, storefront: subscription.storefront, reason: .renewal,
                price: price?.price ?? 0, currency: price?.currency ?? "USD",
                appTransactionId: appTransactionId(customer: customer.id, bundleId: app.bundleId, now: now),
                orderId: nextOrderId(), modifiedDate: now, finished: false, sequence: nextSequence()))
        if subscription.status != .active && subscription.status != .billingGracePeriod {
            subscription.recentSubscriptionStartDate = purchaseDate
        }
        subscription.productId = product.productId
        subscription.expiresDate = expires
        subscription.status = .active
        subscription.expirationIntent = nil
        subscription.gracePeriodExpiresDate = nil
        subscription.billingRetryEndsAt = nil
        subscription.priceIncreaseStatus = nil
        subscription.latestTransactionId = id
        subscriptions[subscription.originalTransactionId] = subscription
        emit(.didRenew, subtype, transactionId: id, now: now)
        mirrorToFamily(subscription, .didRenew, subtype, newTransaction: transaction, now: now)
    }

    mutating func expire(
        _ subscription: inout SubscriptionRecord, _ subtype: Subtype, intent: ExpirationIntent, now: Timestamp
    ) {
        subscription.status = .expired
        subscription.expirationIntent = intent
        subscription.billingRetryEndsAt = nil
        if intent != .billingError { subscription.gracePeriodExpiresDate = nil }
        subscriptions[subscription.originalTransactionId] = subscription
        emit(.expired, subtype, transactionId: subscription.latestTransactionId, now: now)
        mirrorToFamily(subscription, .expired, subtype, newTransaction: nil, now: now)
    }

    /// The customer's payment method starts failing (`fails`) or is fixed. Fixing it retries
    /// billing at once for every subscription in grace period or billing retry: recovered
    /// during the grace period, the subscription keeps its renewal date; later, the new period
    /// starts now.
    mutating func setBillingFails(customer id: String, fails: Bool, now: Timestamp) throws(SimulatorError) {
        var customer = try customer(id)
        customer.billingFails = fails
        customers[id] = customer
        guard !fails else { return }
        let retrying = subscriptions.values
            .filter { $0.customerId == id && $0.familySource == nil && $0.isInBillingRetry }
            .sorted { $0.originalTransactionId < $1.originalTransactionId }
        for var subscription in retrying {
            let start = subscription.status == .billingGracePeriod ? subscription.expiresDate : now
            renew(&subscription, purchaseDate: start, subtype: .billingRecovery, now: now)
        }
    }
}
