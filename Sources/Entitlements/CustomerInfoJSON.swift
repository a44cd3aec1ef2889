import AppStoreModels

/// A `CustomerInfo`'s canonical JSON written member by member: byte for byte what
/// `AppStoreJSON.encode` gives through its `Encodable` conformance (keys in UTF-8 order,
/// optionals left out when nil, dictionaries as objects), without the encoder protocols. Every
/// ingestion stores the new CustomerInfo of its customer, and through `Encodable` the ~2 KB of a
/// short history cost the single writer ~100 µs (240 of 5,261 samples of the POST profile).
/// Tests hold each type's members to its stored members and the bytes to Foundation's.
/// - Note: Stateless; each call uses its own buffer.
enum CustomerInfoJSON {
    static func text(_ info: CustomerInfo) -> String {
        let writer = CanonicalJSONWriter(capacity: 2_048)
        write(info, to: writer)
        return writer.text
    }

    static func text(_ revenue: TransactionRevenue) -> String {
        let writer = CanonicalJSONWriter(capacity: 256)
        write(revenue, to: writer)
        return writer.text
    }

    static func text(_ strings: [String]) -> String {
        let writer = CanonicalJSONWriter(capacity: 64 * strings.count + 2)
        writer.writeStrings(strings)
        return writer.text
    }

    /// A dictionary as an object, its keys in UTF-8 order.
    private static func write<Value>(
        _ dictionary: [String: Value], to writer: CanonicalJSONWriter,
        _ value: (Value, CanonicalJSONWriter) -> Void
    ) {
        writer.append(0x7B)
        let keys = dictionary.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for (index, key) in keys.enumerated() {
            if index > 0 { writer.append(0x2C) }
            writer.writeString(key)
            writer.append(0x3A)
            value(dictionary[key]!, writer)
        }
        writer.append(0x7D)
    }

    private static func write(_ info: CustomerInfo, to writer: CanonicalJSONWriter) {
        var object = CanonicalJSONMembers(writer)
        object.string("customerId", info.customerId)
        object.key("entitlements")
        write(info.entitlements, to: writer) { write($0, to: $1) }
        object.string("environment", info.environment.rawValue)
        object.instant("evaluatedAt", info.evaluatedAt)
        object.strings("eventIds", info.eventIds)
        object.key("introOfferEligibility")
        write(info.introOfferEligibility, to: writer) { write($0, to: $1) }
        object.key("nonSubscriptionPurchases")
        writer.append(0x5B)
        for (index, purchase) in info.nonSubscriptionPurchases.enumerated() {
            if index > 0 { writer.append(0x2C) }
            write(purchase, to: writer)
        }
        writer.append(0x5D)
        object.strings("notes", info.notes)
        object.key("revenue")
        writer.append(0x5B)
        for (index, entry) in info.revenue.enumerated() {
            if index > 0 { writer.append(0x2C) }
            write(entry, to: writer)
        }
        writer.append(0x5D)
        object.key("subscriptions")
        write(info.subscriptions, to: writer) { write($0, to: $1) }
        object.end()
    }

    private static func write(_ entitlement: EntitlementInfo, to writer: CanonicalJSONWriter) {
        var object = CanonicalJSONMembers(writer)
        object.instant("billingIssueDetectedAt", entitlement.billingIssueDetectedAt)
        object.string("entitlementId", entitlement.entitlementId)
        object.string("environment", entitlement.environment.rawValue)
        object.instant("expiresDate", entitlement.expiresDate)
        object.instant("gracePeriodExpiresDate", entitlement.gracePeriodExpiresDate)
        object.bool("isActive", entitlement.isActive)
        object.instant("originalPurchaseDate", entitlement.originalPurchaseDate)
        object.string("originalTransactionId", entitlement.originalTransactionId)
        object.string("ownership", entitlement.ownership.rawValue)
        object.string("periodType", entitlement.periodType.rawValue)
        object.string("productId", entitlement.productId)
        object.instant("purchaseDate", entitlement.purchaseDate)
        object.string("reason", entitlement.reason)
        object.string("store", entitlement.store?.rawValue)
        object.string("transactionId", entitlement.transactionId)
        object.instant("unsubscribeDetectedAt", entitlement.unsubscribeDetectedAt)
        object.bool("willRenew", entitlement.willRenew)
        object.end()
    }

    private static func write(_ eligibility: IntroOfferEligibility, to writer: CanonicalJSONWriter) {
        var object = CanonicalJSONMembers(writer)
        object.bool("isEligible", eligibility.isEligible)
        object.string("reason", eligibility.reason)
        object.string("subscriptionGroup", eligibility.subscriptionGroup)
        object.string("usedByTransactionId", eligibility.usedByTransactionId)
        object.end()
    }

    private static func write(_ revocation: Revocation?, _ name: StaticString, in object: inout CanonicalJSONMembers) {
        guard let revocation else { return }
        object.key(name)
        var inner = CanonicalJSONMembers(object.writer)
        inner.string("kind", revocation.kind.rawValue)
        inner.integer("refundPercentage", revocation.refundPercentage)
        inner.string("refundReason", revocation.refundReason?.rawValue)
        inner.instant("revokedAt", revocation.revokedAt)
        inner.end()
    }

    private static func write(_ purchase: NonSubscriptionPurchase, to writer: CanonicalJSONWriter) {
        var object = CanonicalJSONMembers(writer)
        object.string("environment", purchase.environment.rawValue)
        object.instant("expiresDate", purchase.expiresDate)
        object.bool("isActive", purchase.isActive)
        object.bool("isRestorable", purchase.isRestorable)
        object.bool("isUnknownProduct", purchase.isUnknownProduct)
        object.string("kind", purchase.kind.rawValue)
        object.instant("originalPurchaseDate", purchase.originalPurchaseDate)
        object.string("originalTransactionId", purchase.originalTransactionId)
        object.string("ownership", purchase.ownership.rawValue)
        object.money("price", purchase.price)
        object.string("productId", purchase.productId)
        object.instant("purchaseDate", purchase.purchaseDate)
        object.integer("quantity", purchase.quantity)
        object.string("reason", purchase.reason)
        write(purchase.revocation, "revocation", in: &object)
        object.instant("serviceStartsDate", purchase.serviceStartsDate)
        object.string("store", purchase.store?.rawValue)
        object.string("transactionId", purchase.transactionId)
        object.end()
    }

    private static func write(_ revenue: TransactionRevenue, to writer: CanonicalJSONWriter) {
        var object = CanonicalJSONMembers(writer)
        object.integer("commissionPercent", revenue.commissionPercent)
        object.money("netProceeds", revenue.netProceeds)
        object.integer("paidServiceDaysBefore", revenue.paidServiceDaysBefore)
        object.money("price", revenue.price)
        object.money("proceeds", revenue.proceeds)
        object.string("productId", revenue.productId)
        object.instant("purchaseDate", revenue.purchaseDate)
        object.string("reason", revenue.reason)
        object.money("refunded", revenue.refunded)
        object.string("store", revenue.store?.rawValue)
        object.string("transactionId", revenue.transactionId)
        object.end()
    }

    private static func write(_ subscription: SubscriptionInfo, to writer: CanonicalJSONWriter) {
        var object = CanonicalJSONMembers(writer)
        object.string("autoRenewProductId", subscription.autoRenewProductId)
        object.instant("billingIssueDetectedAt", subscription.billingIssueDetectedAt)
        object.string("environment", subscription.environment.rawValue)
        object.string("expirationReason", subscription.expirationReason?.rawValue)
        object.instant("expiresDate", subscription.expiresDate)
        object.instant("gracePeriodExpiresDate", subscription.gracePeriodExpiresDate)
        object.bool("isActive", subscription.isActive)
        object.bool("isUnknownProduct", subscription.isUnknownProduct)
        object.string("offerIdentifier", subscription.offerIdentifier)
        object.instant("originalPurchaseDate", subscription.originalPurchaseDate)
        object.string("originalTransactionId", subscription.originalTransactionId)
        object.string("ownership", subscription.ownership.rawValue)
        object.productChange("pendingProductChange", subscription.pendingProductChange)
        object.string("periodType", subscription.periodType.rawValue)
        object.money("price", subscription.price)
        object.string("priceIncreaseConsent", subscription.priceIncreaseConsent?.rawValue)
        object.string("productId", subscription.productId)
        object.instant("purchaseDate", subscription.purchaseDate)
        object.string("reason", subscription.reason)
        write(subscription.revocation, "revocation", in: &object)
        object.string("status", subscription.status.rawValue)
        object.string("store", subscription.store?.rawValue)
        object.string("subscriptionGroup", subscription.subscriptionGroup)
        object.string("transactionId", subscription.transactionId)
        object.instant("unsubscribeDetectedAt", subscription.unsubscribeDetectedAt)
        object.bool("willRenew", subscription.willRenew)
        object.end()
    }
}

extension CanonicalJSONMembers {
    /// Money, as `Money` encodes itself.
    package mutating func money(_ name: StaticString, _ value: Money?) {
        guard let value else { return }
        key(name)
        var money = CanonicalJSONMembers(writer)
        money.string("currency", value.currency)
        money.integer("milliunits", value.milliunits)
        money.end()
    }

    /// A product change, as `ProductChange` encodes itself.
    package mutating func productChange(_ name: StaticString, _ value: ProductChange?) {
        guard let value else { return }
        key(name)
        var change = CanonicalJSONMembers(writer)
        change.instant("effectiveAt", value.effectiveAt)
        change.string("fromProductId", value.fromProductId)
        change.bool("isWithdrawn", value.isWithdrawn)
        change.string("kind", value.kind.rawValue)
        change.string("timing", value.timing.rawValue)
        change.string("toProductId", value.toProductId)
        change.end()
    }
}
