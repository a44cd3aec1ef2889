import AppStoreModels
import Entitlements

/// A lifecycle event read straight from its stored text (`event_json`), without `Decodable`:
/// every notification ingestion of a renewing subscription reads back the event it retracts
/// (`retractEvents`), and the outbox reads each event it delivers. Through the decoder protocols
/// that was 1.5% of the POST profile.
///
/// As for the facts (`ColumnJSONReader.transaction`), the text must have exactly the shape
/// `ColumnJSON.event` writes: each member once, no other member, no null, keys without escapes,
/// integers as plain integers, enumerations by a raw value this build knows. Anything else answers
/// `nil` and is decoded the general way, so a text reads the same either way.
extension ColumnJSONReader {
    private static let eventMembers: [StaticString] = [
        "afterFactGap", "commissionPercent", "customerId", "entitlementIds", "environment", "expirationReason",
        "expiresDate", "gracePeriodExpiresDate", "id", "isResubscription", "occurredAt", "offerIdentifier",
        "originalTransactionId", "periodType", "price", "priceIncreaseConsent", "proceeds", "productChange",
        "productId", "refundReason", "retractedEventId", "store", "summary", "transactionId", "type",
    ]
    private static let eventOptional: Set<Int> = [0, 1, 5, 6, 7, 11, 12, 13, 14, 15, 16, 17, 19, 20, 21, 23]
    private static let moneyMembers: [StaticString] = ["currency", "milliunits"]
    private static let productChangeMembers: [StaticString] = [
        "effectiveAt", "fromProductId", "isWithdrawn", "kind", "timing", "toProductId",
    ]

    static func event(from text: String) -> LifecycleEvent? {
        guard let document = ColumnJSONDocument(text) else { return nil }
        do throws(ColumnJSONUnsupported) {
            let m = try document.object(0, eventMembers, optional: eventOptional)
            var event = LifecycleEvent(
                id: try document.string(m[8]!), type: try document.raw(m[24], LifecycleEventType.self)!,
                customerId: try document.string(m[2]!),
                environment: try document.raw(m[4], AppStoreEnvironment.self)!,
                occurredAt: try document.instant(m[10]!), productId: try document.string(m[18]!),
                entitlementIds: try document.elements(of: m[3]!).map { node throws(ColumnJSONUnsupported) in
                    try document.string(node)
                },
                transactionId: try document.optionalString(m[23]),
                originalTransactionId: try document.optionalString(m[12]),
                periodType: try document.raw(m[13], PeriodType.self), price: try money(document, m[14]),
                commissionPercent: try document.optionalInteger(m[1], as: Int.self),
                proceeds: try money(document, m[16]), expiresDate: try document.optionalInstant(m[6]),
                expirationReason: try document.raw(m[5], ExpirationReason.self),
                refundReason: try document.raw(m[19], RefundReason.self),
                productChange: try productChange(document, m[17]), offerIdentifier: try document.optionalString(m[11]),
                priceIncreaseConsent: try document.raw(m[15], PriceIncreaseConsent.self),
                gracePeriodExpiresDate: try document.optionalInstant(m[7]),
                isResubscription: try document.bool(m[9]!), summary: try document.string(m[22]!))
            event.afterFactGap = try document.optionalBool(m[0])
            event.retractedEventId = try document.optionalString(m[20])
            event.store = try document.raw(m[21], Marketplace.self)
            return event
        } catch {
            return nil
        }
    }

    private static func money(_ document: ColumnJSONDocument, _ node: Int?) throws(ColumnJSONUnsupported) -> Money? {
        guard let node else { return nil }
        let m = try document.object(node, moneyMembers, optional: [])
        return Money(milliunits: try document.integer(m[1]!, as: Int64.self), currency: try document.string(m[0]!))
    }

    private static func productChange(_ document: ColumnJSONDocument, _ node: Int?) throws(ColumnJSONUnsupported)
        -> ProductChange?
    {
        guard let node else { return nil }
        let m = try document.object(node, productChangeMembers, optional: [2])
        var change = ProductChange(
            fromProductId: try document.string(m[1]!), toProductId: try document.string(m[5]!),
            kind: try document.raw(m[3], ProductChange.Kind.self)!,
            timing: try document.raw(m[4], ProductChange.Timing.self)!, effectiveAt: try document.instant(m[0]!))
        change.isWithdrawn = try document.optionalBool(m[2])
        return change
    }
}
