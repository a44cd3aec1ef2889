import AppStoreModels

/// What an auto-renewable subscription period counts as at an instant, for active
/// subscriptions, active trials and MRR.
///
/// A period is active from its purchase until its expiry, or until the end of the billing
/// grace period while the subscription is in one. Auto-renew off still counts. A period
/// refunded in full counts at no instant; one refunded in part, or revoked by an upgrade or
/// Family Sharing, counts until the revocation.
/// - Note: Immutable value; `Sendable`.
public enum SubscriptionActivity: String, Sendable, Hashable, Codable {
    case paid = "PAID"
    case trial = "TRIAL"
    /// Access through Family Sharing: counted apart, never as a subscription.
    case familyShared = "FAMILY_SHARED"

    /// The activity of `transaction` at `instant`, or `nil` when it is not active then.
    /// - Parameter gracePeriodEnd: the end of the billing grace period when this is the
    ///   subscription's latest period and it is in one.
    public static func of(
        _ transaction: TransactionFact, at instant: Timestamp, gracePeriodEnd: Timestamp? = nil,
        catalog: ProductCatalog
    ) -> SubscriptionActivity? {
        guard let active = interval(of: transaction, gracePeriodEnd: gracePeriodEnd, catalog: catalog),
            active.start <= instant, instant < active.end
        else { return nil }
        return active.activity
    }

    /// When `transaction` is active, `[start, end)`, and as what; `nil` when it never is (not
    /// an auto-renewable subscription, no expiry, refunded in full).
    public static func interval(
        of transaction: TransactionFact, gracePeriodEnd: Timestamp? = nil, catalog: ProductCatalog
    ) -> (activity: SubscriptionActivity, start: Timestamp, end: Timestamp)? {
        guard PaidServiceAccrual.isAutoRenewable(transaction, catalog: catalog),
            let expires = transaction.expiresDate
        else { return nil }
        let isFamilyShared = transaction.ownership == .familyShared || transaction.revocationType == .familyRevoke
        var end = max(expires, gracePeriodEnd ?? expires)
        if let revokedAt = transaction.revocationDate {
            let fullRefund = !transaction.isUpgraded && !isFamilyShared && transaction.revocationType != .refundProrated
            if fullRefund { return nil }
            end = min(end, revokedAt)
        }
        guard transaction.purchaseDate < end else { return nil }
        let activity: SubscriptionActivity =
            isFamilyShared ? .familyShared : (transaction.periodType == .trial ? .trial : .paid)
        return (activity, transaction.purchaseDate, end)
    }
}
