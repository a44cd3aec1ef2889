import AppStoreModels
import Foundation

/// Price increases for subscribers: with consent required (`PRICE_INCREASE` `PENDING`, and
/// `EXPIRED` `PRICE_INCREASE` at renewal without consent) or without (`ACCEPTED` at once).
extension StoreState {
    mutating func increasePrice(
        productId: String, bundleId: String?, storefront: String?, price newPrice: Int64, requiresConsent: Bool,
        now: Timestamp
    ) throws(SimulatorError) {
        var (app, product) = try product(productId, bundleId: bundleId)
        guard product.kind == .autoRenewable else {
            throw SimulatorError(.invalidAction, "price increases notify subscribers of auto-renewable subscriptions")
        }
        for index in product.prices.indices where storefront == nil || product.prices[index].storefront == storefront {
            product.prices[index].price = newPrice
        }
        if let position = app.products.firstIndex(where: { $0.productId == productId }) {
            app.products[position] = product
        }
        apps[app.bundleId] = app
        let affected = subscriptions.values
            .filter {
                $0.bundleId == app.bundleId && $0.autoRenewProductId == productId && $0.familySource == nil
                    && $0.isLive && (storefront == nil || $0.storefront == storefront)
            }
            .sorted { $0.originalTransactionId < $1.originalTransactionId }
        for var subscription in affected {
            subscription.priceIncreaseStatus =
                requiresConsent ? .customerHasNotResponded : .customerConsentedOrWasNotifiedWithoutNeedingConsent
            subscriptions[subscription.originalTransactionId] = subscription
            emit(
                .priceIncrease, requiresConsent ? .pending : .accepted, transactionId: subscription.latestTransactionId,
                now: now)
        }
    }

    mutating func consentToPriceIncrease(customer: String, productId: String, bundleId: String?, now: Timestamp)
        throws(SimulatorError)
    {
        var subscription = try liveSubscription(customer: customer, productId: productId, bundleId: bundleId)
        guard subscription.priceIncreaseStatus == .customerHasNotResponded else {
            throw SimulatorError(.invalidAction, "no price increase awaits \(customer)'s consent")
        }
        subscription.priceIncreaseStatus = .customerConsentedOrWasNotifiedWithoutNeedingConsent
        subscriptions[subscription.originalTransactionId] = subscription
        emit(.priceIncrease, .accepted, transactionId: subscription.latestTransactionId, now: now)
    }
}
