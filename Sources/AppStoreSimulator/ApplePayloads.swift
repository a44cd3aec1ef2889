import AppStoreModels
import Foundation

/// Builds the decoded payloads the App Store signs from the ledger, field for field as Apple
/// fills them: milliseconds, Apple's names, and fields that do not apply left out (nil is never
/// encoded as `null`).
extension StoreState {
    func transactionPayload(_ record: TransactionRecord, signedDate: Timestamp) -> JWSTransactionDecodedPayload {
        var payload = JWSTransactionDecodedPayload()
        payload.transactionId = record.transactionId
        payload.originalTransactionId = record.originalTransactionId
        payload.webOrderLineItemId = record.webOrderLineItemId
        payload.bundleId = record.bundleId
        payload.productId = record.productId
        payload.subscriptionGroupIdentifier = record.groupId
        payload.purchaseDate = record.purchaseDate
        payload.originalPurchaseDate = record.originalPurchaseDate
        payload.expiresDate = record.expiresDate
        payload.quantity = record.quantity
        payload.type = RawEnum(record.kind.productType)
        payload.appAccountToken = record.appAccountToken
        payload.inAppOwnershipType = RawEnum(record.ownership)
        payload.signedDate = signedDate
        if record.isRevoked {
            payload.revocationReason = record.revocationReason.map { RawEnum($0) }
            payload.revocationDate = record.revocationDate
            payload.revocationType = record.revocationType.map { RawEnum($0) }
            payload.revocationPercentage = record.revocationPercentage
        }
        if record.isUpgraded { payload.isUpgraded = true }
        if let offer = record.offer {
            payload.offerType = RawEnum(offer.kind.offerType)
            payload.offerIdentifier = offer.id
            payload.offerDiscountType = RawEnum(offer.discountType)
            payload.offerPeriod = offer.period.description
        }
        payload.environment = RawEnum(environment)
        payload.storefront = record.storefront
        payload.storefrontId = Storefronts.identifier(for: record.storefront)
        payload.transactionReason = RawEnum(record.reason)
        payload.price = record.price
        payload.currency = record.currency
        payload.appTransactionId = record.appTransactionId
        return payload
    }

    func renewalPayload(_ record: SubscriptionRecord, signedDate: Timestamp) -> JWSRenewalInfoDecodedPayload {
        var payload = JWSRenewalInfoDecodedPayload()
        let latest = transactions[record.latestTransactionId]
        payload.originalTransactionId = record.originalTransactionId
        payload.productId = record.productId
        payload.autoRenewProductId = record.autoRenewProductId
        payload.autoRenewStatus = RawEnum(record.autoRenew ? .on : .off)
        if record.status != .active {
            payload.expirationIntent = record.expirationIntent.map { RawEnum($0) }
        }
        if record.isInBillingRetry {
            payload.isInBillingRetryPeriod = true
        } else if record.status == .expired {
            payload.isInBillingRetryPeriod = false
        }
        if record.status == .billingGracePeriod || record.gracePeriodExpiresDate != nil && record.isInBillingRetry {
            payload.gracePeriodExpiresDate = record.gracePeriodExpiresDate
        }
        payload.priceIncreaseStatus = record.priceIncreaseStatus.map { RawEnum($0) }
        if let offer = record.renewalOffer, offer.remaining > 0 {
            payload.offerType = RawEnum(offer.offer.kind.offerType)
            payload.offerIdentifier = offer.offer.id
            payload.offerDiscountType = RawEnum(offer.offer.discountType)
            payload.offerPeriod = offer.offer.period.description
        }
        payload.signedDate = signedDate
        payload.environment = RawEnum(environment)
        payload.recentSubscriptionStartDate = record.recentSubscriptionStartDate
        payload.renewalDate = record.expiresDate
        if let app = apps[record.bundleId], let product = app.product(record.autoRenewProductId) {
            let price =
                record.renewalOffer.flatMap { $0.remaining > 0 ? $0.prices.price(for: record.storefront) : nil }
                ?? product.prices.price(for: record.storefront)
            if record.renewalOffer?.offer.discountType == .freeTrial, (record.renewalOffer?.remaining ?? 0) > 0 {
                payload.renewalPrice = 0
                payload.currency = product.prices.price(for: record.storefront)?.currency
            } else {
                payload.renewalPrice = price?.price
                payload.currency = price?.currency
            }
            if record.status == .expired {
                let eligible = product.winBackOffers.compactMap(\.id).filter {
                    !winBackOffersUsed.contains(Self.eligibilityKey(record.customerId, record.bundleId, $0))
                }
                if !eligible.isEmpty { payload.eligibleWinBackOfferIds = eligible }
            }
        }
        payload.appTransactionId = latest?.appTransactionId
        payload.appAccountToken = record.appAccountToken
        return payload
    }

    func appTransactionPayload(customer: String, bundleId: String, signedDate: Timestamp) -> AppTransaction? {
        let key = customer + "|" + bundleId
        guard let id = appTransactionIds[key], let app = apps[bundleId] else { return nil }
        var payload = AppTransaction()
        payload.receiptType = RawEnum(environment)
        if environment == .production { payload.appAppleId = app.appAppleId }
        payload.bundleId = bundleId
        payload.applicationVersion = app.bundleVersion
        payload.versionExternalIdentifier = environment == .production ? 1 : 0
        payload.receiptCreationDate = signedDate
        payload.originalPurchaseDate = firstSeen[key]
        payload.originalApplicationVersion = "1.0"
        payload.appTransactionId = id
        payload.originalPlatform = RawEnum(rawValue: "iOS")
        return payload
    }
}
