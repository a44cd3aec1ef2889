import Entitlements

/// Which of a customer's facts changed since they were last read, from the purchases' stamps
/// (`purchase_fact_stamps`, migrations 0027 and 0028; SQLite only) and the fact rows this transaction
/// wrote itself: a long history's facts are then worked out without reading its rows again.
extension SQLStoreTransaction {
    /// A purchase (an original transaction or a Play purchase token) of an app.
    struct Purchase: Hashable {
        var appId: String
        var id: String
    }

    /// One fact row this transaction wrote, with the purchase's stamp before and after the write.
    struct StampedFactWrite {
        var before: Int64?
        var after: Int64
        var row: FactRowWrite
    }

    func factStamps(customerId: Int64) throws -> [PurchaseFactStamp]? {
        guard connection.keepsFactStamps else { return nil }
        var stamps: [PurchaseFactStamp] = []
        var complete = true
        try scan(
            """
            WITH purchases(id) AS (\(Self.customerPurchases))
            SELECT c.app_id, p.id, s.stamp FROM purchases p
            CROSS JOIN customers c
            LEFT JOIN purchase_fact_stamps s ON s.app_id = c.app_id AND s.purchase_id = p.id
            WHERE c.id = $1
            ORDER BY p.id
            """, .integer(customerId)
        ) { row throws(StoreError) in
            // A purchase whose facts predate the stamps (or that has none yet) has no stamp.
            guard !row.isNull(2) else {
                complete = false
                return
            }
            stamps.append(
                PurchaseFactStamp(appId: try row.text(0), purchaseId: try row.text(1), stamp: try row.integer(2)))
        }
        return complete ? stamps : nil
    }

    func stampFacts(customerId: Int64) throws -> [PurchaseFactStamp]? {
        guard connection.keepsFactStamps else { return nil }
        try execute(
            """
            WITH purchases(id) AS (\(Self.customerPurchases))
            INSERT INTO purchase_fact_stamps (app_id, purchase_id, stamp)
            SELECT c.app_id, p.id, random() FROM purchases p CROSS JOIN customers c WHERE c.id = $1
            ON CONFLICT (app_id, purchase_id) DO NOTHING
            """, .integer(customerId))
        return try factStamps(customerId: customerId)
    }

    func factRowsWritten(from known: [PurchaseFactStamp], to current: [PurchaseFactStamp]) -> [FactRowWrite]? {
        guard known.count == current.count else { return nil }
        var rows: [FactRowWrite] = []
        for (old, new) in zip(known, current) {
            guard old.appId == new.appId, old.purchaseId == new.purchaseId else { return nil }
            guard old.stamp != new.stamp else { continue }
            // From the known stamp, write by write (a write whose stamp before is not the one
            // reached belongs to an earlier point), to the stamp stored now; any other change
            // on the way (a row this transaction did not write this way, another writer, a
            // rolled-back write) leaves a stamp no write here starts from.
            var stamp = old.stamp
            for write in factWrites[Purchase(appId: old.appId, id: old.purchaseId)] ?? [] where write.before == stamp {
                rows.append(write.row)
                stamp = write.after
            }
            guard stamp == new.stamp else { return nil }
        }
        return rows
    }

    /// Remembers the fact row just written for `purchaseId`, with the stamps its write left
    /// (one more read: the row's triggers restamped the purchase once); nothing for a purchase
    /// without a stamp.
    func recordFactWrite(
        appId: String, purchaseId: String?, key: FactRowKey, json: String, fact: Fact
    ) throws(StoreError) {
        guard let purchaseId, connection.keepsFactStamps else { return }
        guard
            let stamps = try row(
                "SELECT stamp, previous_stamp FROM purchase_fact_stamps WHERE app_id = $1 AND purchase_id = $2",
                .text(appId), .text(purchaseId))
        else { return }
        factWrites[Purchase(appId: appId, id: purchaseId), default: []].append(
            StampedFactWrite(
                before: try stamps.optionalInteger(1), after: try stamps.integer(0),
                row: FactRowWrite(key: key, json: json, fact: fact)))
    }
}

/// One purchase of a customer and the stamp its facts' last change left.
/// - Note: Immutable value; `Sendable`.
public struct PurchaseFactStamp: Sendable, Hashable {
    public let appId: String
    public let purchaseId: String
    public let stamp: Int64
}

/// A fact row a transaction wrote: where it is, the text stored and the fact it was encoded
/// from (equal to that text's decoding).
/// - Note: Immutable value; `Sendable`.
public struct FactRowWrite: Sendable {
    public let key: FactRowKey
    public let json: String
    public let fact: Fact
}
