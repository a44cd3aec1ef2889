import AppStoreModels
import Foundation

/// A customer buying a product, as the admin API and scenario steps describe it.
/// - Note: Immutable value; `Sendable`.
public struct PurchaseRequest: Sendable, Hashable, Codable {
    /// Which offer to redeem; the introductory offer is applied automatically when the
    /// customer is eligible (as StoreKit does) unless `introductoryOffer` is false.
    public struct OfferChoice: Sendable, Hashable, Codable {
        public var kind: OfferKind
        public var id: String?
        public init(kind: OfferKind, id: String? = nil) {
            self.kind = kind
            self.id = id
        }
    }

    public var customer: String
    public var productId: String
    public var bundleId: String?
    public var offer: OfferChoice?
    public var introductoryOffer: Bool?
    /// Overrides the customer's default token for this purchase.
    public var appAccountToken: UUID?
    public var quantity: Int32?

    public init(
        customer: String, productId: String, bundleId: String? = nil, offer: OfferChoice? = nil,
        introductoryOffer: Bool? = nil, appAccountToken: UUID? = nil, quantity: Int32? = nil
    ) {
        self.customer = customer
        self.productId = productId
        self.bundleId = bundleId
        self.offer = offer
        self.introductoryOffer = introductoryOffer
        self.appAccountToken = appAccountToken
        self.quantity = quantity
    }
}

extension StoreState {
    /// Buys a product: a one-time charge, a new subscription, a resubscription, an offer
    /// redemption or a change of plan in the group. Returns the new transaction's id (the
    /// current one when nothing was charged, e.g. a downgrade).
    mutating func purchase(_ request: PurchaseRequest, now: Timestamp) throws(SimulatorError) -> String {
        let (app, product) = try product(request.productId, bundleId: request.bundleId)
        let customer = try customer(request.customer)
        _ = appTransactionId(customer: customer.id, bundleId: app.bundleId, now: now)
        guard let price = product.prices.price(for: customer.storefront) else {
            throw SimulatorError(.unknownProduct, "\(product.productId) has no price")
        }
        let token = request.appAccountToken ?? customer.appAccountToken
        guard product.kind == .autoRenewable, let groupId = product.groupId else {
            if request.offer != nil {
                throw SimulatorError(.offerNotAvailable, "offers apply to auto-renewable subscriptions only")
            }
            let id = nextNumericId()
            let transaction = record(
                TransactionRecord(
                    transactionId: id, originalTransactionId: id, webOrderLineItemId: nil, bundleId: app.bundleId,
                    customerId: customer.id, productId: product.productId, kind: product.kind, groupId: nil,
                    purchaseDate: now, originalPurchaseDate: now, expiresDate: nil,
                    quantity: max(1, request.quantity ?? 1), appAccountToken: token, ownership: .purchased,
                    isUpgraded: false, offer: nil, storefront: customer.storefront, reason: .purchase,
                    price: price.price * Int64(max(1, request.quantity ?? 1)), currency: price.currency,
                    appTransactionId: appTransactionId(customer: customer.id, bundleId: app.bundleId, now: now),
                    orderId: nextOrderId(), modifiedDate: now, finished: false, sequence: nextSequence()))
            emit(.oneTimeCharge, transactionId: transaction.transactionId, now: now)
            if product.familyShareable, product.kind == .nonConsumable {
                shareWithFamily(transaction, now: now)
            }
            return transaction.transactionId
        }

        if var existing = ownSubscription(customer: customer.id, bundleId: app.bundleId, groupId: groupId),
            existing.isLive
        {
            return try change(&existing, to: product, in: app, offer: request.offer, now: now)
        }
        let existing = ownSubscription(customer: customer.id, bundleId: app.bundleId, groupId: groupId)
        let eligibilityKey = Self.eligibilityKey(customer.id, app.bundleId, groupId)
        var chosen: (SubscriptionOffer, OfferKind)?
        if let choice = request.offer {
            guard let offer = product.offer(choice.kind, id: choice.id) else {
                throw SimulatorError(
                    .offerNotAvailable, "\(product.productId) has no \(choice.kind) offer \(choice.id ?? "")")
            }
            switch choice.kind {
            case .introductory:
                guard !introductoryOfferUsed.contains(eligibilityKey) else {
                    throw SimulatorError(.offerNotAvailable, "customer is not eligible for the introductory offer")
                }
            case .winBack:
                let key = Self.eligibilityKey(customer.id, app.bundleId, offer.id ?? "")
                guard existing?.status == .expired, !winBackOffersUsed.contains(key) else {
                    throw SimulatorError(
                        .offerNotAvailable, "win-back offers are for lapsed subscribers who have not used them")
                }
                winBackOffersUsed.insert(key)
            case .promotional, .offerCode:
                break
            }
            chosen = (offer, choice.kind)
        } else if request.introductoryOffer != false, let intro = product.introductoryOffer,
            !introductoryOfferUsed.contains(eligibilityKey)
        {
            chosen = (intro, .introductory)
        }
        // Apple: one introductory offer per group, and none for someone who subscribed before.
        introductoryOfferUsed.insert(eligibilityKey)

        let period = product.period ?? .month
        var applied: AppliedOffer?
        var duration = period
        var charged = price
        var renewalOffer: SubscriptionRecord.PendingOffer?
        if let (offer, kind) = chosen {
            applied = AppliedOffer(
                kind: kind, id: offer.id, discountType: offer.discountType, period: offer.totalPeriod)
            switch offer.discountType {
            case .freeTrial:
                duration = offer.period
                charged = Price(storefront: price.storefront, currency: price.currency, price: 0)
            case .payUpFront:
                duration = offer.period
                charged = offer.prices.price(for: customer.storefront) ?? price
            default:
                charged = offer.prices.price(for: customer.storefront) ?? price
                if offer.periodCount > 1, let applied {
                    renewalOffer = .init(offer: applied, remaining: offer.periodCount - 1, prices: offer.prices)
                }
            }
        }
        let id = nextNumericId()
        let originalTransactionId = existing?.originalTransactionId ?? id
        let originalPurchaseDate = existing.flatMap { transactions[$0.originalTransactionId]?.purchaseDate } ?? now
        let expires = scale.adding(duration, to: now)
        record(
            TransactionRecord(
                transactionId: id, originalTransactionId: originalTransactionId, webOrderLineItemId: nextNumericId(),
                bundleId: app.bundleId, customerId: customer.id, productId: product.productId, kind: .autoRenewable,
                groupId: groupId, purchaseDate: now, originalPurchaseDate: originalPurchaseDate, expiresDate: expires,
                quantity: 1, appAccountToken: token, ownership: .purchased, isUpgraded: false, offer: applied,
                storefront: customer.storefront, reason: .purchase, price: charged.price, currency: charged.currency,
                appTransactionId: appTransactionId(customer: customer.id, bundleId: app.bundleId, now: now),
                orderId: nextOrderId(), modifiedDate: now, finished: false, sequence: nextSequence()))
        subscriptions[originalTransactionId] = SubscriptionRecord(
            originalTransactionId: originalTransactionId, bundleId: app.bundleId, customerId: customer.id,
            groupId: groupId, productId: product.productId, autoRenewProductId: product.productId, autoRenew: true,
            expiresDate: expires, status: .active, expirationIntent: nil, gracePeriodExpiresDate: nil,
            billingRetryEndsAt: nil, priceIncreaseStatus: nil, renewalOffer: renewalOffer,
            recentSubscriptionStartDate: now, ownership: .purchased, familySource: nil, appAccountToken: token,
            latestTransactionId: id, extensionDates: existing?.extensionDates ?? [], storefront: customer.storefront,
            autoRenewStatusChangeDate: nil)
        // Apple: redeeming a promotional offer, offer code or win-back offer is OFFER_REDEEMED
        // (with the same INITIAL_BUY / RESUBSCRIBE subtype); an introductory offer or a plain
        // purchase is SUBSCRIBED.
        let redeemed = applied.map { $0.kind != .introductory } ?? false
        emit(
            redeemed ? .offerRedeemed : .subscribed, existing == nil ? .initialBuy : .resubscribe, transactionId: id,
            now: now)
        if product.familyShareable, let transaction = transactions[id] { shareWithFamily(transaction, now: now) }
        return id
    }

    /// A purchase in the group of a live subscription: upgrade and same-duration crossgrade take
    /// effect now; downgrade and different-duration crossgrade at the next renewal; the same
    /// product with an offer redeems it for the next period; the current product again cancels
    /// a pending downgrade.
    private mutating func change(
        _ subscription: inout SubscriptionRecord, to product: SimulatedProduct, in app: SimulatedApp,
        offer choice: PurchaseRequest.OfferChoice?, now: Timestamp
    ) throws(SimulatorError) -> String {
        var pendingOffer: SubscriptionRecord.PendingOffer?
        if let choice {
            guard choice.kind == .promotional || choice.kind == .offerCode,
                let offer = product.offer(choice.kind, id: choice.id)
            else {
                throw SimulatorError(
                    .offerNotAvailable, "subscribers can redeem promotional offers and offer codes only")
            }
            pendingOffer = .init(
                offer: AppliedOffer(
                    kind: choice.kind, id: offer.id, discountType: offer.discountType, period: offer.totalPeriod),
                remaining: offer.discountType == .payAsYouGo ? offer.periodCount : 1, prices: offer.prices)
        }
        let latestId = subscription.latestTransactionId
        if product.productId == subscription.productId {
            if let pendingOffer {
                subscription.renewalOffer = pendingOffer
                subscription.autoRenewProductId = product.productId
                subscription.autoRenew = true
                subscriptions[subscription.originalTransactionId] = subscription
                emit(.offerRedeemed, transactionId: latestId, now: now)
                return latestId
            }
            guard subscription.autoRenewProductId != product.productId else {
                throw SimulatorError(.alreadySubscribed, "customer already subscribes to \(product.productId)")
            }
            subscription.autoRenewProductId = product.productId
            subscriptions[subscription.originalTransactionId] = subscription
            emit(.didChangeRenewalPref, transactionId: latestId, now: now)
            mirrorToFamily(subscription, .didChangeRenewalPref, nil, newTransaction: nil, now: now)
            return latestId
        }
        guard let current = app.product(subscription.productId), let period = product.period else {
            throw SimulatorError(.unknownProduct, "no product \(subscription.productId)")
        }
        let sameDuration = current.period?.approximateMonths == period.approximateMonths
        let immediate = product.level < current.level || (product.level == current.level && sameDuration)
        let customer = try customer(subscription.customerId)
        subscription.autoRenew = true
        guard immediate else {
            subscription.autoRenewProductId = product.productId
            if let pendingOffer { subscription.renewalOffer = pendingOffer }
            subscriptions[subscription.originalTransactionId] = subscription
            if pendingOffer != nil {
                emit(.offerRedeemed, .downgrade, transactionId: latestId, now: now)
            } else {
                emit(.didChangeRenewalPref, .downgrade, transactionId: latestId, now: now)
            }
            mirrorToFamily(subscription, .didChangeRenewalPref, .downgrade, newTransaction: nil, now: now)
            return latestId
        }
        if var previous = transactions[latestId] {
            previous.isUpgraded = true
            previous.modifiedDate = now
            transactions[latestId] = previous
        }
        var applied: AppliedOffer?
        var charged = product.prices.price(for: customer.storefront)
        var duration = period
        if let pendingOffer {
            applied = pendingOffer.offer
            charged =
                pendingOffer.offer.discountType == .freeTrial
                ? charged.map { Price(storefront: $0.storefront, currency: $0.currency, price: 0) }
                : pendingOffer.prices.price(for: customer.storefront) ?? charged
            if pendingOffer.offer.discountType != .payAsYouGo { duration = pendingOffer.offer.period }
        }
        let id = nextNumericId()
        let expires = scale.adding(duration, to: now)
        let original = transactions[subscription.originalTransactionId]
        let newTransaction = record(
            TransactionRecord(
                transactionId: id, originalTransactionId: subscription.originalTransactionId,
                webOrderLineItemId: nextNumericId(), bundleId: app.bundleId, customerId: customer.id,
                productId: product.productId, kind: .autoRenewable, groupId: subscription.groupId, purchaseDate: now,
                originalPurchaseDate: original?.originalPurchaseDate ?? now, expiresDate: expires, quantity: 1,
                appAccountToken: subscription.appAccountToken, ownership: .purchased, isUpgraded: false, offer: applied,
                storefront: customer.storefront, reason: .purchase, price: charged?.price ?? 0,
                currency: charged?.currency ?? "USD",
                appTransactionId: appTransactionId(customer: customer.id, bundleId: app.bundleId, now: now),
                orderId: nextOrderId(), modifiedDate: now, finished: false, sequence: nextSequence()))
        subscription.productId = product.productId
        subscription.autoRenewProductId = product.productId
        subscription.expiresDate = expires
        subscription.status = .active
        subscription.expirationIntent = nil
        subscription.gracePeriodExpiresDate = nil
        subscription.billingRetryEndsAt = nil
        subscription.priceIncreaseStatus = nil
        subscription.latestTransactionId = id
        if let pendingOffer, pendingOffer.remaining > 1 {
            subscription.renewalOffer = .init(
                offer: pendingOffer.offer, remaining: pendingOffer.remaining - 1, prices: pendingOffer.prices)
        } else {
            subscription.renewalOffer = nil
        }
        subscriptions[subscription.originalTransactionId] = subscription
        if pendingOffer != nil {
            emit(.offerRedeemed, .upgrade, transactionId: id, now: now)
        } else {
            emit(.didChangeRenewalPref, .upgrade, transactionId: id, now: now)
        }
        mirrorToFamily(subscription, .didChangeRenewalPref, .upgrade, newTransaction: newTransaction, now: now)
        return id
    }

    /// Turns auto-renew on or off for the customer's subscription in the product's group.
    mutating func setAutoRenew(customer: String, productId: String, bundleId: String?, enabled: Bool, now: Timestamp)
        throws(SimulatorError)
    {
        var subscription = try liveSubscription(customer: customer, productId: productId, bundleId: bundleId)
        guard subscription.autoRenew != enabled else { return }
        subscription.autoRenew = enabled
        subscription.autoRenewStatusChangeDate = now
        subscriptions[subscription.originalTransactionId] = subscription
        let subtype: Subtype = enabled ? .autoRenewEnabled : .autoRenewDisabled
        emit(.didChangeRenewalStatus, subtype, transactionId: subscription.latestTransactionId, now: now)
        mirrorToFamily(subscription, .didChangeRenewalStatus, subtype, newTransaction: nil, now: now)
    }

    /// The customer's own live subscription in the group of `productId`.
    func liveSubscription(customer: String, productId: String, bundleId: String?) throws(SimulatorError)
        -> SubscriptionRecord
    {
        let (app, product) = try product(productId, bundleId: bundleId)
        guard let groupId = product.groupId,
            let subscription = ownSubscription(customer: customer, bundleId: app.bundleId, groupId: groupId)
        else {
            throw SimulatorError(.unknownSubscription, "\(customer) has no subscription in the group of \(productId)")
        }
        guard subscription.isLive else {
            throw SimulatorError(.invalidAction, "\(customer)'s subscription to \(productId) is not active")
        }
        return subscription
    }
}
