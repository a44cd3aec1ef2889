import AppStoreModels
import Entitlements

/// The customer's facts and state as stored, undecoded: for a caller that keeps decoded
/// values in memory and only needs to know whether the store still holds the same text.
extension SQLStoreTransaction {
    /// One statement for the five fact tables (five statements, each working out the
    /// customer's purchases again, were a tenth of the writer's time when notifications are
    /// spread over many customers). Each table is reached through its index on (app, original
    /// transaction or purchase token), once per purchase; the rows come back in the order
    /// `facts(customerId:)` gives: by table, then by row id. `CROSS JOIN` makes SQLite start
    /// from the purchases (it otherwise chose to scan all of the app's notifications).
    func factJSON(customerId: Int64) throws -> [FactJSON] {
        var parts: [(key: FactRowKey, json: FactJSON)] = []
        try scanFactJSON(customerId: customerId) { row throws(StoreError) in
            let json = String(decoding: row.json, as: UTF8.self)
            parts.append((row.key, FactJSON(kind: row.kind, json: json, inserted: row.inserted)))
        }
        parts.sort { $0.key < $1.key }
        return parts.map(\.json)
    }

    func scanFactJSON(customerId: Int64, _ body: (FactRowView) throws(StoreError) -> Void) throws(StoreError) {
        try scan(Self.customerFactsStatement, .integer(customerId)) { row throws(StoreError) in
            let part = try row.integer(0)
            let kind: FactKind
            switch part {
            case 0: kind = .transaction
            case 1: kind = .renewalInfo
            case 2: kind = .notification
            case 3: kind = try Self.factKind(playKind: try row.text(2))
            case 4: kind = .playOrder
            default: throw StoreError(.corruptValue, "customer facts: unknown part \(part)")
            }
            let key = FactRowKey(part: part, id: try row.integer(1))
            try row.withBytes(3) { bytes throws(StoreError) in
                // Only while the row holds the very text stored with the fact (a later statement
                // of this transaction may have rewritten it).
                let inserted = insertedFacts[InsertedFact(part: key.part, id: key.id)].flatMap {
                    StoredText.sameBytes($0.json, bytes) ? $0.fact : nil
                }
                try body(FactRowView(key: key, kind: kind, json: bytes, inserted: inserted))
            }
        }
    }

    /// The customer's fact rows as (part, row id, Play kind, fact JSON); `$1` is the customer.
    static let customerFactsStatement = """
        WITH purchases(id) AS (\(customerPurchases)),
        app(id) AS (SELECT app_id FROM customers WHERE id = $1)
        SELECT 0, f.id, NULL, f.fact_json FROM purchases p CROSS JOIN signed_transactions f
          WHERE f.app_id = (SELECT id FROM app) AND f.original_transaction_id = p.id
        UNION ALL
        SELECT 1, f.id, NULL, f.fact_json FROM purchases p CROSS JOIN signed_renewal_infos f
          WHERE f.app_id = (SELECT id FROM app) AND f.original_transaction_id = p.id
        UNION ALL
        SELECT 2, f.id, NULL, f.fact_json FROM purchases p CROSS JOIN notifications f
          WHERE f.app_id = (SELECT id FROM app) AND f.original_transaction_id = p.id AND f.fact_json IS NOT NULL
        UNION ALL
        SELECT 3, f.id, f.kind, f.fact_json FROM purchases p CROSS JOIN play_snapshots f
          WHERE f.app_id = (SELECT id FROM app) AND f.purchase_token = p.id
        UNION ALL
        SELECT 4, f.id, NULL, f.fact_json FROM purchases p CROSS JOIN play_orders f
          WHERE f.app_id = (SELECT id FROM app) AND f.purchase_token = p.id
        """

    func customerInfoJSON(customerId: Int64, environment: AppStoreEnvironment) throws -> StoredCustomerInfoJSON? {
        try row(
            "SELECT info_json, version FROM customer_states WHERE customer_id = $1 AND environment = $2",
            .integer(customerId), .text(environment.rawValue)
        ).map { row throws(StoreError) in
            StoredCustomerInfoJSON(json: try row.text(0), version: try row.integer(1))
        }
    }
}

/// Where one of a customer's facts is stored: its table (`part`: transactions, renewal infos,
/// notifications, Play snapshots, Play orders) and its row id there. `factJSON(customerId:)`
/// lists facts in this key's order.
/// - Note: Immutable value; `Sendable`.
public struct FactRowKey: Sendable, Hashable, Comparable {
    public let part: Int64
    public let id: Int64

    public init(part: Int64, id: Int64) {
        self.part = part
        self.id = id
    }

    public static func < (lhs: FactRowKey, rhs: FactRowKey) -> Bool {
        lhs.part != rhs.part ? lhs.part < rhs.part : lhs.id < rhs.id
    }
}

/// One of a customer's stored facts seen in place by `StoreReader.scanFactJSON`: its
/// `fact_json` bytes are the engine's, valid only during the call that received them.
/// - Note: A borrowed view; never stored, never sent to another thread.
public struct FactRowView {
    public let key: FactRowKey
    public let kind: FactKind
    /// The stored `fact_json`, UTF-8.
    public let json: UnsafeRawBufferPointer
    /// The fact itself when this transaction inserted the row with exactly these bytes.
    let inserted: Fact?

    /// The stored text and the fact it holds (the inserted fact, or decoded); `corruptValue` if
    /// it does not decode.
    public func decode() throws(StoreError) -> (json: String, fact: Fact) {
        let stored = FactJSON(kind: kind, json: String(decoding: json, as: UTF8.self), inserted: inserted)
        return (stored.json, try stored.decode())
    }
}

/// One stored fact's JSON (`fact_json`), as `StoreReader.facts(customerId:)` decodes it.
/// - Note: Immutable value; `Sendable`.
public struct FactJSON: Sendable, Hashable {
    public let kind: FactKind
    public let json: String
    /// The fact itself when this transaction inserted the row (`json` was encoded from it):
    /// `decode` returns it instead of decoding `json` again. Not part of equality.
    let inserted: Fact?

    public init(kind: FactKind, json: String) {
        self.init(kind: kind, json: json, inserted: nil)
    }

    init(kind: FactKind, json: String, inserted: Fact?) {
        self.kind = kind
        self.json = json
        self.inserted = inserted
    }

    public static func == (lhs: FactJSON, rhs: FactJSON) -> Bool { lhs.kind == rhs.kind && lhs.json == rhs.json }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(json)
    }

    /// The fact this JSON holds; `corruptValue` if it does not decode.
    public func decode() throws(StoreError) -> Fact {
        if let inserted { return inserted }
        // The App Store's facts straight from the text when it has the stored shape.
        switch kind {
        case .transaction: if let fact = ColumnJSONReader.transaction(from: json) { return .transaction(fact) }
        case .renewalInfo: if let fact = ColumnJSONReader.renewal(from: json) { return .renewalInfo(fact) }
        case .notification: if let fact = ColumnJSONReader.notification(from: json) { return .notification(fact) }
        default: break
        }
        return switch kind {
        case .transaction:
            .transaction(try SQLStoreTransaction.decode(TransactionFact.self, json, column: "fact_json"))
        case .renewalInfo:
            .renewalInfo(try SQLStoreTransaction.decode(RenewalFact.self, json, column: "fact_json"))
        case .notification:
            .notification(try SQLStoreTransaction.decode(NotificationFact.self, json, column: "fact_json"))
        case .playSubscription:
            .playSubscription(try SQLStoreTransaction.decode(PlaySubscriptionFact.self, json, column: "fact_json"))
        case .playProductPurchase:
            .playProductPurchase(
                try SQLStoreTransaction.decode(PlayProductPurchaseFact.self, json, column: "fact_json"))
        case .playVoidedPurchase:
            .playVoidedPurchase(try SQLStoreTransaction.decode(PlayVoidedPurchaseFact.self, json, column: "fact_json"))
        case .playOrder:
            .playOrder(try SQLStoreTransaction.decode(PlayOrderFact.self, json, column: "fact_json"))
        }
    }
}

/// A customer's stored state in one environment, undecoded (`customer_states.info_json`).
/// - Note: Immutable value; `Sendable`.
public struct StoredCustomerInfoJSON: Sendable, Hashable {
    public var json: String
    /// As `StoredCustomerInfo.version`.
    public var version: Int64

    /// The state this JSON holds; `corruptValue` if it does not decode.
    public func decode() throws(StoreError) -> CustomerInfo {
        try SQLStoreTransaction.decode(CustomerInfo.self, json, column: "customer_states.info_json")
    }

    /// What the next evaluation reads of it; `corruptValue` if those fields do not decode.
    public func decodePrevious() throws(StoreError) -> PreviousEvaluation {
        try SQLStoreTransaction.decode(PreviousEvaluation.self, json, column: "customer_states.info_json")
    }
}
