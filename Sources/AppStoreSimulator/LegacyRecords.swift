import AppStoreModels
import AppStoreTrust
import Foundation

/// The StoreKit 1 view of the ledger: receipt fields, `latest_receipt_info` and
/// `pending_renewal_info` as verifyReceipt and V1 notifications report them.
extension StoreState {
    /// What the app receipt of a customer lists: subscriptions, non-consumables, non-renewing
    /// subscriptions and unfinished consumables.
    func receiptTransactions(customer: String, bundleId: String) -> [TransactionRecord] {
        transactions(ofCustomer: customer).filter {
            $0.bundleId == bundleId && !($0.kind == .consumable && $0.finished)
        }
    }

    func legacyPurchase(_ record: TransactionRecord) -> LegacyInAppPurchase {
        var purchase = LegacyInAppPurchase()
        purchase.quantity = Int64(record.quantity)
        purchase.productId = record.productId
        purchase.transactionId = record.transactionId
        purchase.originalTransactionId = record.originalTransactionId
        purchase.purchaseDate = record.purchaseDate
        purchase.originalPurchaseDate = record.originalPurchaseDate
        purchase.expiresDate = record.expiresDate
        purchase.webOrderLineItemId = record.webOrderLineItemId
        if record.kind == .autoRenewable {
            let intro = record.offer?.kind == .introductory
            purchase.isTrialPeriod = intro && record.offer?.discountType == .freeTrial
            purchase.isInIntroOfferPeriod = intro && record.offer?.discountType != .freeTrial
            purchase.subscriptionGroupIdentifier = record.groupId
            if record.isUpgraded { purchase.isUpgraded = true }
        } else {
            purchase.isTrialPeriod = false
        }
        if record.isRevoked {
            purchase.cancellationDate = record.revocationDate
            purchase.cancellationReason = record.revocationReason.map { RawEnum($0) }
        }
        if record.offer?.kind == .promotional { purchase.promotionalOfferId = record.offer?.id }
        if record.offer?.kind == .offerCode { purchase.offerCodeRefName = record.offer?.id }
        purchase.inAppOwnershipType = RawEnum(record.ownership)
        purchase.appAccountToken = record.appAccountToken?.uuidString.lowercased()
        return purchase
    }

    func legacyRenewal(_ subscription: SubscriptionRecord) -> LegacyPendingRenewalInfo {
        var info = LegacyPendingRenewalInfo()
        info.autoRenewProductId = subscription.autoRenewProductId
        info.autoRenewStatus = RawEnum(subscription.autoRenew ? .on : .off)
        if subscription.status != .active { info.expirationIntent = subscription.expirationIntent.map { RawEnum($0) } }
        if subscription.status == .billingGracePeriod {
            info.gracePeriodExpiresDate = subscription.gracePeriodExpiresDate
        }
        if subscription.isInBillingRetry {
            info.isInBillingRetryPeriod = true
        } else if subscription.status == .expired {
            info.isInBillingRetryPeriod = false
        }
        info.originalTransactionId = subscription.originalTransactionId
        info.priceConsentStatus = subscription.priceIncreaseStatus.map { RawEnum($0) }
        info.priceIncreaseStatus = subscription.priceIncreaseStatus.map { RawEnum($0) }
        info.productId = subscription.productId
        if let offer = subscription.renewalOffer?.offer {
            if offer.kind == .promotional { info.promotionalOfferId = offer.id }
            if offer.kind == .offerCode { info.offerCodeRefName = offer.id }
        }
        return info
    }

    /// `latest_receipt_info`: subscription transactions, newest first (latest per original
    /// transaction only with `exclude-old-transactions`).
    func latestReceiptInfo(customer: String, bundleId: String, excludeOld: Bool) -> [LegacyInAppPurchase] {
        var records = transactions(ofCustomer: customer).filter {
            $0.bundleId == bundleId && $0.kind == .autoRenewable
        }
        if excludeOld {
            let latest = Set(records.compactMap { subscriptions[$0.originalTransactionId]?.latestTransactionId })
            records = records.filter { latest.contains($0.transactionId) }
        }
        return Array(records.map(legacyPurchase).sortedByPurchaseDate().reversed())
    }

    func pendingRenewalInfo(customer: String, bundleId: String) -> [LegacyPendingRenewalInfo] {
        subscriptions(ofCustomer: customer).filter { $0.bundleId == bundleId }
            .sorted { $0.originalTransactionId < $1.originalTransactionId }
            .map(legacyRenewal)
    }

    /// The app receipt's attributes for a customer at `now`.
    func receiptBuilder(customer: String, bundleId: String, now: Timestamp) -> AppReceiptBuilder? {
        guard let app = apps[bundleId] else { return nil }
        var builder = AppReceiptBuilder()
        builder.set(0, .string(environment == .production ? "Production" : "ProductionSandbox"))
        builder.set(1, .integer(environment == .production ? app.appAppleId : 0))
        builder.set(2, .string(bundleId))
        builder.set(3, .string(app.bundleVersion))
        // The opaque value names the account, so verifyReceipt can find the customer of a
        // receipt that holds no purchase yet.
        builder.set(4, .bytes(Array(customer.utf8)))
        builder.set(5, .bytes(Array(Digest.sha256(Array((customer + bundleId).utf8)).prefix(20))))
        builder.set(12, AppReceiptBuilder.date(now))
        builder.set(18, AppReceiptBuilder.date(firstSeen[customer + "|" + bundleId] ?? now))
        builder.set(19, .string("1.0"))
        for record in receiptTransactions(customer: customer, bundleId: bundleId) {
            var fields: [(Int, ReceiptValue)] = [
                (1701, .integer(Int64(record.quantity))), (1702, .string(record.productId)),
                (1703, .string(record.transactionId)), (1704, AppReceiptBuilder.date(record.purchaseDate)),
                (1705, .string(record.originalTransactionId)),
                (1706, AppReceiptBuilder.date(record.originalPurchaseDate)),
            ]
            if let expires = record.expiresDate { fields.append((1708, AppReceiptBuilder.date(expires))) }
            if let web = record.webOrderLineItemId.flatMap({ Int64($0) }) { fields.append((1711, .integer(web))) }
            if let revoked = record.revocationDate { fields.append((1712, AppReceiptBuilder.date(revoked))) }
            if record.kind == .autoRenewable {
                let intro = record.offer?.kind == .introductory
                fields.append((1713, .integer(intro && record.offer?.discountType == .freeTrial ? 1 : 0)))
                fields.append((1719, .integer(intro && record.offer?.discountType != .freeTrial ? 1 : 0)))
            }
            if record.offer?.kind == .promotional, let id = record.offer?.id { fields.append((1721, .string(id))) }
            builder.inAppPurchases.append(fields)
        }
        return builder
    }
}
