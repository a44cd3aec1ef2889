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
        var object = CanonicalJSONMembers(writer)
        object.string("currency", fact.currency)
        object.string("environment", fact.environment.rawValue)
        object.instant("expiresDate", fact.expiresDate)
        object.bool("isUpgraded", fact.isUpgraded)
        object.string("offerIdentifier", fact.offerIdentifier)
        object.instant("originalPurchaseDate", fact.originalPurchaseDate)
        object.string("originalTransactionId", fact.originalTransactionId)
        object.string("ownership", fact.ownership.rawValue)
        object.string("periodType", fact.periodType.rawValue)
        object.integer("price", fact.price)
        object.string("productId", fact.productId)
        object.string("productKind", fact.productKind?.rawValue)
        object.instant("purchaseDate", fact.purchaseDate)
        object.integer("quantity", fact.quantity)
        object.instant("revocationDate", fact.revocationDate)
        object.integer("revocationPercentage", fact.revocationPercentage)
        object.integer("revocationReason", fact.revocationReason)
        object.string("revocationType", fact.revocationType?.rawValue)
        object.instant("signedDate", fact.signedDate)
        object.string("storefront", fact.storefront)
        object.string("subscriptionGroup", fact.subscriptionGroup)
        object.string("transactionId", fact.transactionId)
        object.string("transactionReason", fact.transactionReason?.rawValue)
        object.end()
        return writer.text
    }

    /// A lifecycle event member by member, keys in sorted order, optionals left out when nil:
    /// what its `Encodable` conformance gives (a renewal appends and revises several events, and
    /// through `Encodable` each cost about 8 µs of the single writer's time in the POST profile).
    /// A test holds the members to `LifecycleEvent`'s stored members.
    static func event(_ event: LifecycleEvent) -> String {
        let writer = CanonicalJSONWriter(capacity: 512)
        var object = CanonicalJSONMembers(writer)
        object.bool("afterFactGap", event.afterFactGap)
        object.integer("commissionPercent", event.commissionPercent)
        object.string("customerId", event.customerId)
        object.strings("entitlementIds", event.entitlementIds)
        object.string("environment", event.environment.rawValue)
        object.string("expirationReason", event.expirationReason?.rawValue)
        object.instant("expiresDate", event.expiresDate)
        object.instant("gracePeriodExpiresDate", event.gracePeriodExpiresDate)
        object.string("id", event.id)
        object.bool("isResubscription", event.isResubscription)
        object.instant("occurredAt", event.occurredAt)
        object.string("offerIdentifier", event.offerIdentifier)
        object.string("originalTransactionId", event.originalTransactionId)
        object.string("periodType", event.periodType?.rawValue)
        object.money("price", event.price)
        object.string("priceIncreaseConsent", event.priceIncreaseConsent?.rawValue)
        object.money("proceeds", event.proceeds)
        object.productChange("productChange", event.productChange)
        object.string("productId", event.productId)
        object.string("refundReason", event.refundReason?.rawValue)
        object.string("retractedEventId", event.retractedEventId)
        object.string("store", event.store?.rawValue)
        object.string("summary", event.summary)
        object.string("transactionId", event.transactionId)
        object.string("type", event.type.rawValue)
        object.end()
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
        var object = CanonicalJSONMembers(writer)
        object.key("ltv")
        writer.append(0x5B)
        for (index, entry) in contribution.ltv.enumerated() {
            if index > 0 { writer.append(0x2C) }
            var member = CanonicalJSONMembers(writer)
            member.key("key")
            var key = CanonicalJSONMembers(writer)
            key.string("cohortMonth", entry.key.cohortMonth.iso8601)
            key.string("currency", entry.key.currency)
            key.string("day", entry.key.day.iso8601)
            cohortTail(&key, entry.key.productId, entry.key.storefront, entry.key.subscriptionGroup)
            member.key("values")
            writer.append(0x5B)
            for (position, value) in entry.values.enumerated() {
                if position > 0 { writer.append(0x2C) }
                writer.writeInteger(value)
            }
            writer.append(0x5D)
            member.end()
        }
        writer.append(0x5D)
        object.key("retention")
        writer.append(0x5B)
        for (index, entry) in contribution.retention.enumerated() {
            if index > 0 { writer.append(0x2C) }
            var member = CanonicalJSONMembers(writer)
            member.key("key")
            var key = CanonicalJSONMembers(writer)
            key.string("cohortMonth", entry.key.cohortMonth.iso8601)
            key.integer("paidRenewals", entry.key.paidRenewals)
            cohortTail(&key, entry.key.productId, entry.key.storefront, entry.key.subscriptionGroup)
            member.integer("subscriptions", entry.subscriptions)
            member.end()
        }
        writer.append(0x5D)
        object.end()
        return writer.text
    }

    /// The members both cohort keys end with, and the key's end.
    private static func cohortTail(
        _ key: inout CanonicalJSONMembers, _ productId: String, _ storefront: String, _ subscriptionGroup: String
    ) {
        key.string("productId", productId)
        key.string("storefront", storefront)
        key.string("subscriptionGroup", subscriptionGroup)
        key.end()
    }
}
