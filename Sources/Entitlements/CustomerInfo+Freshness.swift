import AppStoreModels

extension CustomerInfo {
    /// The first instant after `evaluatedAt` at which this state can change with no new fact:
    /// the earliest expiry, grace period end or service start it depends on. `nil` when time
    /// alone changes nothing. Until then the stored state is the answer, byte for byte.
    public var nextScheduledChange: Timestamp? {
        var next: Timestamp?
        func consider(_ date: Timestamp?) {
            guard let date, date > evaluatedAt else { return }
            if next.map({ date < $0 }) ?? true { next = date }
        }
        for entitlement in entitlements.values {
            consider(entitlement.expiresDate)
            consider(entitlement.gracePeriodExpiresDate)
        }
        for subscription in subscriptions.values {
            consider(subscription.expiresDate)
            consider(subscription.gracePeriodExpiresDate)
        }
        for purchase in nonSubscriptionPurchases {
            consider(purchase.expiresDate)
            consider(purchase.serviceStartsDate)
        }
        return next
    }

    /// Whether a date the state depends on has passed by `now` since it was evaluated.
    public func mayHaveChanged(by now: Timestamp) -> Bool {
        guard let next = nextScheduledChange else { return false }
        return next <= now
    }
}
