import AppStoreModels
import Entitlements

/// The App Store facts of a customer read straight from their stored text (`fact_json`),
/// without `Decodable`: a customer not in the evaluation cache has each of its facts decoded at
/// its next ingestion (every ingestion of the POST workload), and through the decoder protocols
/// that cost the single writer ~40 µs of each (102 of 5,261 samples).
///
/// As for the contributions (`ColumnJSONReader.contributions`), the text must have exactly the
/// shape the store writes: each member once, no other member, no null, keys without escapes,
/// integers as plain integers, enumerations by a raw value this build knows. Anything else answers
/// `nil` and is decoded the general way, so a text reads the same either way.
extension ColumnJSONReader {
    private static let transactionMembers: [StaticString] = [
        "currency", "environment", "expiresDate", "isUpgraded", "offerIdentifier", "originalPurchaseDate",
        "originalTransactionId", "ownership", "periodType", "price", "productId", "productKind", "purchaseDate",
        "quantity", "revocationDate", "revocationPercentage", "revocationReason", "revocationType", "signedDate",
        "storefront", "subscriptionGroup", "transactionId", "transactionReason",
    ]
    private static let transactionOptional: Set<Int> = [0, 2, 4, 5, 9, 11, 14, 15, 16, 17, 19, 20, 22]

    static func transaction(from text: String) -> TransactionFact? {
        guard let document = ColumnJSONDocument(text) else { return nil }
        do throws(ColumnJSONUnsupported) {
            let m = try document.object(0, transactionMembers, optional: transactionOptional)
            return TransactionFact(
                transactionId: try document.string(m[21]!), originalTransactionId: try document.string(m[6]!),
                productId: try document.string(m[10]!), productKind: try document.raw(m[11], ProductKind.self),
                subscriptionGroup: try document.optionalString(m[20]),
                purchaseDate: try document.instant(m[12]!), originalPurchaseDate: try document.optionalInstant(m[5]),
                expiresDate: try document.optionalInstant(m[2]), signedDate: try document.instant(m[18]!),
                revocationDate: try document.optionalInstant(m[14]),
                revocationReason: try document.optionalInteger(m[16], as: Int32.self),
                revocationType: try document.raw(m[17], RevocationType.self),
                revocationPercentage: try document.optionalInteger(m[15], as: Int32.self),
                isUpgraded: try document.bool(m[3]!), periodType: try document.raw(m[8], PeriodType.self)!,
                offerIdentifier: try document.optionalString(m[4]),
                ownership: try document.raw(m[7], Ownership.self)!,
                environment: try document.raw(m[1], AppStoreEnvironment.self)!,
                price: try document.optionalInteger(m[9], as: Int64.self),
                currency: try document.optionalString(m[0]),
                quantity: try document.integer(m[13]!, as: Int.self),
                transactionReason: try document.raw(m[22], TransactionReason.self),
                storefront: try document.optionalString(m[19]))
        } catch {
            return nil
        }
    }

    private static let renewalMembers: [StaticString] = [
        "autoRenewEnabled", "autoRenewProductId", "environment", "expirationIntent", "gracePeriodExpiresDate",
        "isInBillingRetryPeriod", "originalTransactionId", "priceIncreaseStatus", "productId", "signedDate",
    ]
    private static let renewalOptional: Set<Int> = [0, 1, 3, 4, 7]

    static func renewal(from text: String) -> RenewalFact? {
        guard let document = ColumnJSONDocument(text) else { return nil }
        do throws(ColumnJSONUnsupported) {
            let m = try document.object(0, renewalMembers, optional: renewalOptional)
            return RenewalFact(
                originalTransactionId: try document.string(m[6]!), productId: try document.string(m[8]!),
                autoRenewProductId: try document.optionalString(m[1]),
                autoRenewEnabled: try document.optionalBool(m[0]),
                expirationIntent: try document.optionalInteger(m[3], as: Int32.self),
                isInBillingRetryPeriod: try document.bool(m[5]!),
                gracePeriodExpiresDate: try document.optionalInstant(m[4]),
                priceIncreaseStatus: try document.optionalInteger(m[7], as: Int32.self),
                signedDate: try document.instant(m[9]!),
                environment: try document.raw(m[2], AppStoreEnvironment.self)!)
        } catch {
            return nil
        }
    }

    private static let notificationMembers: [StaticString] = [
        "environment", "notificationId", "originalTransactionId", "productId", "signedDate", "subtype",
        "transactionId", "type",
    ]
    private static let notificationOptional: Set<Int> = [2, 3, 5, 6]

    static func notification(from text: String) -> NotificationFact? {
        guard let document = ColumnJSONDocument(text) else { return nil }
        do throws(ColumnJSONUnsupported) {
            let m = try document.object(0, notificationMembers, optional: notificationOptional)
            return NotificationFact(
                notificationId: try document.string(m[1]!), type: try document.string(m[7]!),
                subtype: try document.optionalString(m[5]), signedDate: try document.instant(m[4]!),
                environment: try document.raw(m[0], AppStoreEnvironment.self)!,
                originalTransactionId: try document.optionalString(m[2]),
                transactionId: try document.optionalString(m[6]),
                productId: try document.optionalString(m[3]))
        } catch {
            return nil
        }
    }
}

extension ColumnJSONDocument {
    /// An instant written as whole milliseconds (`Timestamp`'s coding of what the store writes).
    func instant(_ node: Int) throws(ColumnJSONUnsupported) -> Timestamp {
        Timestamp(millisecondsSince1970: try integer(node, as: Int64.self))
    }

    func optionalInstant(_ node: Int?) throws(ColumnJSONUnsupported) -> Timestamp? {
        guard let node else { return nil }
        return try instant(node)
    }

    func optionalString(_ node: Int?) throws(ColumnJSONUnsupported) -> String? {
        guard let node else { return nil }
        return try string(node)
    }

    func optionalBool(_ node: Int?) throws(ColumnJSONUnsupported) -> Bool? {
        guard let node else { return nil }
        return try bool(node)
    }

    func optionalInteger<I: FixedWidthInteger>(_ node: Int?, as type: I.Type) throws(ColumnJSONUnsupported) -> I? {
        guard let node else { return nil }
        return try integer(node, as: type)
    }

    /// The case a string names (`nil` when `node` is); gives up on a raw value this build lacks.
    func raw<Value: RawRepresentable>(_ node: Int?, _ type: Value.Type) throws(ColumnJSONUnsupported) -> Value?
    where Value.RawValue == String {
        guard let node else { return nil }
        guard let value = Value(rawValue: try string(node)) else { throw fail() }
        return value
    }
}
