import AppStoreModels
import Entitlements

/// Turns legacy verifyReceipt / V1 notification entries into the engine's facts (the engine
/// leaves reading Apple's legacy fields to the server).
/// - Note: Stateless; thread-safe.
public enum LegacyFactMapping {
    /// Entries lacking a product, transaction or purchase date are skipped.
    public static func transactions(
        _ entries: [LegacyInAppPurchase], environment: AppStoreEnvironment, observedAt: Timestamp
    ) -> [TransactionFact] {
        entries.compactMap { entry in
            guard let productId = entry.productId, let transactionId = entry.transactionId,
                let purchaseDate = entry.purchaseDate
            else { return nil }
            let ownership: Ownership? =
                switch entry.inAppOwnershipType?.value {
                case .familyShared?: .familyShared
                case .purchased?: .purchased
                default: nil
                }
            return TransactionFact(
                LegacyTransactionFact(
                    productId: productId, transactionId: transactionId,
                    originalTransactionId: entry.originalTransactionId ?? transactionId,
                    webOrderLineItemId: entry.webOrderLineItemId,
                    subscriptionGroupIdentifier: entry.subscriptionGroupIdentifier, purchaseDate: purchaseDate,
                    originalPurchaseDate: entry.originalPurchaseDate, expiresDate: entry.expiresDate,
                    cancellationDate: entry.cancellationDate, cancellationReason: entry.cancellationReason?.rawValue,
                    isTrialPeriod: entry.isTrialPeriod ?? false,
                    isInIntroOfferPeriod: entry.isInIntroOfferPeriod ?? false,
                    isUpgraded: entry.isUpgraded ?? false, inAppOwnershipType: ownership,
                    promotionalOfferId: entry.promotionalOfferId, offerCodeRefName: entry.offerCodeRefName,
                    quantity: Int(entry.quantity ?? 1), environment: environment, observedAt: observedAt))
        }
    }

    public static func renewals(
        _ entries: [LegacyPendingRenewalInfo], environment: AppStoreEnvironment, observedAt: Timestamp
    ) -> [RenewalFact] {
        entries.compactMap { entry in
            guard let productId = entry.productId, let originalTransactionId = entry.originalTransactionId else {
                return nil
            }
            return RenewalFact(
                LegacyRenewalFact(
                    productId: productId, originalTransactionId: originalTransactionId,
                    autoRenewProductId: entry.autoRenewProductId,
                    autoRenewStatus: entry.autoRenewStatus.map { $0.rawValue == 1 },
                    expirationIntent: entry.expirationIntent?.rawValue,
                    isInBillingRetryPeriod: entry.isInBillingRetryPeriod,
                    gracePeriodExpiresDate: entry.gracePeriodExpiresDate,
                    priceConsentStatus: (entry.priceConsentStatus ?? entry.priceIncreaseStatus)?.rawValue,
                    environment: environment, observedAt: observedAt))
        }
    }
}
