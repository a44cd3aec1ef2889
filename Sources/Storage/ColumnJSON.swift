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
}
