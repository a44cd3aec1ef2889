import AppStoreModels
import Entitlements
import Foundation

/// The JSON of the store's `…_json` columns: what `AppStoreJSON.encode` writes, as text, with
/// transaction facts (a bulk import writes millions) and daily contribution entries written
/// member by member.
/// - Note: Stateless; each call uses its own buffer.
enum ColumnJSON {
    static func encode<T: Encodable>(_ value: T) -> String {
        if T.self == TransactionFact.self { return transaction(value as! TransactionFact) }
        if T.self == SQLStoreTransaction.StoredContribution.self {
            return contribution(value as! SQLStoreTransaction.StoredContribution)
        }
        if T.self == LifecycleEvent.self { return event(value as! LifecycleEvent) }
        if T.self == SQLStoreTransaction.StoredCohortContribution.self {
            return cohorts(value as! SQLStoreTransaction.StoredCohortContribution)
        }
        return AppStoreJSON.encodeText(value)
    }

    /// A transaction fact (a bulk import writes millions) member by member, keys in sorted
    /// order, optionals left out when nil: what its synthesized `Encodable` conformance gives.
    /// A test holds the members to `TransactionFact`'s stored members.
    static func transaction(_ fact: TransactionFact) -> String {
        let writer = CanonicalJSONWriter(capacity: 512)
        var first = true
        func key(_ name: StaticString) {
            writer.append(first ? 0x7B : 0x2C)
            first = false
            writer.append(0x22)
            writer.append(name)
            writer.append("\":")
        }
        if let currency = fact.currency {
            key("currency")
            writer.writeString(currency)
        }
        key("environment")
        writer.writeString(fact.environment.rawValue)
        if let expiresDate = fact.expiresDate {
            key("expiresDate")
            writer.writeInteger(expiresDate.millisecondsSince1970)
        }
        key("isUpgraded")
        writer.writeBool(fact.isUpgraded)
        if let offerIdentifier = fact.offerIdentifier {
            key("offerIdentifier")
            writer.writeString(offerIdentifier)
        }
        if let originalPurchaseDate = fact.originalPurchaseDate {
            key("originalPurchaseDate")
            writer.writeInteger(originalPurchaseDate.millisecondsSince1970)
        }
        key("originalTransactionId")
        writer.writeString(fact.originalTransactionId)
        key("ownership")
        writer.writeString(fact.ownership.rawValue)
        key("periodType")
        writer.writeString(fact.periodType.rawValue)
        if let price = fact.price {
            key("price")
            writer.writeInteger(price)
        }
        key("productId")
        writer.writeString(fact.productId)
        if let productKind = fact.productKind {
            key("productKind")
            writer.writeString(productKind.rawValue)
        }
        key("purchaseDate")
        writer.writeInteger(fact.purchaseDate.millisecondsSince1970)
        key("quantity")
        writer.writeInteger(fact.quantity)
        if let revocationDate = fact.revocationDate {
            key("revocationDate")
            writer.writeInteger(revocationDate.millisecondsSince1970)
        }
        if let revocationPercentage = fact.revocationPercentage {
            key("revocationPercentage")
            writer.writeInteger(revocationPercentage)
        }
        if let revocationReason = fact.revocationReason {
            key("revocationReason")
            writer.writeInteger(revocationReason)
        }
        if let revocationType = fact.revocationType {
            key("revocationType")
            writer.writeString(revocationType.rawValue)
        }
        key("signedDate")
        writer.writeInteger(fact.signedDate.millisecondsSince1970)
        if let storefront = fact.storefront {
            key("storefront")
            writer.writeString(storefront)
        }
        if let subscriptionGroup = fact.subscriptionGroup {
            key("subscriptionGroup")
            writer.writeString(subscriptionGroup)
        }
        key("transactionId")
        writer.writeString(fact.transactionId)
        if let transactionReason = fact.transactionReason {
            key("transactionReason")
            writer.writeString(transactionReason.rawValue)
        }
        writer.append(0x7D)
        return writer.text
    }

    /// A lifecycle event member by member, keys in sorted order, optionals left out when nil:
    /// what its `Encodable` conformance gives (a renewal appends and revises several events, and
    /// through `Encodable` each cost about 8 µs of the single writer's time in the POST profile).
    /// A test holds the members to `LifecycleEvent`'s stored members.
    static func event(_ event: LifecycleEvent) -> String {
        let writer = CanonicalJSONWriter(capacity: 512)
        var first = true
        func key(_ name: StaticString) {
            writer.append(first ? 0x7B : 0x2C)
            first = false
            writer.append(0x22)
            writer.append(name)
            writer.append("\":")
        }
        func money(_ value: Money) {
            writer.append("{\"currency\":")
            writer.writeString(value.currency)
            writer.append(",\"milliunits\":")
            writer.writeInteger(value.milliunits)
            writer.append(0x7D)
        }
        if let afterFactGap = event.afterFactGap {
            key("afterFactGap")
            writer.writeBool(afterFactGap)
        }
        if let commissionPercent = event.commissionPercent {
            key("commissionPercent")
            writer.writeInteger(commissionPercent)
        }
        key("customerId")
        writer.writeString(event.customerId)
        key("entitlementIds")
        writer.append(0x5B)
        for (index, entitlementId) in event.entitlementIds.enumerated() {
            if index > 0 { writer.append(0x2C) }
            writer.writeString(entitlementId)
        }
        writer.append(0x5D)
        key("environment")
        writer.writeString(event.environment.rawValue)
        if let expirationReason = event.expirationReason {
            key("expirationReason")
            writer.writeString(expirationReason.rawValue)
        }
        if let expiresDate = event.expiresDate {
            key("expiresDate")
            writer.writeInteger(expiresDate.millisecondsSince1970)
        }
        if let gracePeriodExpiresDate = event.gracePeriodExpiresDate {
            key("gracePeriodExpiresDate")
            writer.writeInteger(gracePeriodExpiresDate.millisecondsSince1970)
        }
        key("id")
        writer.writeString(event.id)
        key("isResubscription")
        writer.writeBool(event.isResubscription)
        key("occurredAt")
        writer.writeInteger(event.occurredAt.millisecondsSince1970)
        if let offerIdentifier = event.offerIdentifier {
            key("offerIdentifier")
            writer.writeString(offerIdentifier)
        }
        if let originalTransactionId = event.originalTransactionId {
            key("originalTransactionId")
            writer.writeString(originalTransactionId)
        }
        if let periodType = event.periodType {
            key("periodType")
            writer.writeString(periodType.rawValue)
        }
        if let price = event.price {
            key("price")
            money(price)
        }
        if let priceIncreaseConsent = event.priceIncreaseConsent {
            key("priceIncreaseConsent")
            writer.writeString(priceIncreaseConsent.rawValue)
        }
        if let proceeds = event.proceeds {
            key("proceeds")
            money(proceeds)
        }
        if let change = event.productChange {
            key("productChange")
            writer.append("{\"effectiveAt\":")
            writer.writeInteger(change.effectiveAt.millisecondsSince1970)
            writer.append(",\"fromProductId\":")
            writer.writeString(change.fromProductId)
            if let isWithdrawn = change.isWithdrawn {
                writer.append(",\"isWithdrawn\":")
                writer.writeBool(isWithdrawn)
            }
            writer.append(",\"kind\":")
            writer.writeString(change.kind.rawValue)
            writer.append(",\"timing\":")
            writer.writeString(change.timing.rawValue)
            writer.append(",\"toProductId\":")
            writer.writeString(change.toProductId)
            writer.append(0x7D)
        }
        key("productId")
        writer.writeString(event.productId)
        if let refundReason = event.refundReason {
            key("refundReason")
            writer.writeString(refundReason.rawValue)
        }
        if let retractedEventId = event.retractedEventId {
            key("retractedEventId")
            writer.writeString(retractedEventId)
        }
        if let store = event.store {
            key("store")
            writer.writeString(store.rawValue)
        }
        key("summary")
        writer.writeString(event.summary)
        if let transactionId = event.transactionId {
            key("transactionId")
            writer.writeString(transactionId)
        }
        key("type")
        writer.writeString(event.type.rawValue)
        writer.append(0x7D)
        return writer.text
    }

    /// One entry of a customer's daily analytics contribution (a cold customer's hundreds are
    /// each encoded on their own at its next fact; through `Encodable` they were over a third of
    /// the contribution step) member by member, in sorted order: `{"key":{…},"values":[…]}`, the
    /// key's `store` left out for the App Store, as `AnalyticsDailyKey.encode(to:)` does. A test
    /// holds it to the `Encodable` form.
    static func contribution(_ entry: SQLStoreTransaction.StoredContribution) -> String {
        let writer = CanonicalJSONWriter(capacity: 256)
        let key = entry.key
        writer.append("{\"key\":{\"currency\":")
        writer.writeString(key.currency)
        writer.append(",\"day\":")
        writer.writeString(key.day.iso8601)
        writer.append(",\"productId\":")
        writer.writeString(key.productId)
        if key.store != .appStore {
            writer.append(",\"store\":")
            writer.writeString(key.store.rawValue)
        }
        writer.append(",\"storefront\":")
        writer.writeString(key.storefront)
        writer.append(",\"subscriptionGroup\":")
        writer.writeString(key.subscriptionGroup)
        writer.append("},\"values\":[")
        for index in entry.values.indices {
            if index > 0 { writer.append(0x2C) }
            writer.writeInteger(entry.values[index])
        }
        writer.append("]}")
        return writer.text
    }

    /// A customer's retention and LTV cohort contribution member by member, in sorted order:
    /// `{"ltv":[{"key":{…},"values":[…]},…],"retention":[{"key":{…},"subscriptions":N},…]}`,
    /// what its `Encodable` conformance gives (rewritten at every fact of the customer; through
    /// `Encodable` it was 7% of the single writer's time in the POST profile). A test holds it
    /// to the `Encodable` form.
    static func cohorts(_ contribution: SQLStoreTransaction.StoredCohortContribution) -> String {
        let writer = CanonicalJSONWriter(capacity: 256)
        writer.append("{\"ltv\":[")
        for (index, entry) in contribution.ltv.enumerated() {
            if index > 0 { writer.append(0x2C) }
            let key = entry.key
            writer.append("{\"key\":{\"cohortMonth\":")
            writer.writeString(key.cohortMonth.iso8601)
            writer.append(",\"currency\":")
            writer.writeString(key.currency)
            writer.append(",\"day\":")
            writer.writeString(key.day.iso8601)
            writer.append(",\"productId\":")
            writer.writeString(key.productId)
            writer.append(",\"storefront\":")
            writer.writeString(key.storefront)
            writer.append(",\"subscriptionGroup\":")
            writer.writeString(key.subscriptionGroup)
            writer.append("},\"values\":[")
            for (position, value) in entry.values.enumerated() {
                if position > 0 { writer.append(0x2C) }
                writer.writeInteger(value)
            }
            writer.append("]}")
        }
        writer.append("],\"retention\":[")
        for (index, entry) in contribution.retention.enumerated() {
            if index > 0 { writer.append(0x2C) }
            let key = entry.key
            writer.append("{\"key\":{\"cohortMonth\":")
            writer.writeString(key.cohortMonth.iso8601)
            writer.append(",\"paidRenewals\":")
            writer.writeInteger(key.paidRenewals)
            writer.append(",\"productId\":")
            writer.writeString(key.productId)
            writer.append(",\"storefront\":")
            writer.writeString(key.storefront)
            writer.append(",\"subscriptionGroup\":")
            writer.writeString(key.subscriptionGroup)
            writer.append("},\"subscriptions\":")
            writer.writeInteger(entry.subscriptions)
            writer.append(0x7D)
        }
        writer.append("]}")
        return writer.text
    }
}
