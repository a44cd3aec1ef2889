import AppStoreModels
import Entitlements

/// The customer's facts and state as stored, undecoded: for a caller that keeps decoded
/// values in memory and only needs to know whether the store still holds the same text.
extension SQLStoreTransaction {
    func factJSON(customerId: Int64) throws -> [FactJSON] {
        var facts: [FactJSON] = []
        for (kind, table) in [
            (FactKind.transaction, "signed_transactions"), (.renewalInfo, "signed_renewal_infos"),
            (.notification, "notifications"),
        ] {
            // The table name is one of the three literals above, never input.
            for row in try rows(
                """
                SELECT f.fact_json FROM \(table) f
                WHERE f.app_id = (SELECT app_id FROM customers WHERE id = $1)
                  AND f.original_transaction_id IN (\(Self.customerPurchases)) AND f.fact_json IS NOT NULL
                ORDER BY f.id
                """, .integer(customerId))
            {
                facts.append(FactJSON(kind: kind, json: try row.text(0)))
            }
        }
        for row in try rows(
            """
            SELECT p.kind, p.fact_json FROM play_snapshots p
            WHERE p.app_id = (SELECT app_id FROM customers WHERE id = $1)
              AND p.purchase_token IN (\(Self.customerPurchases))
            ORDER BY p.id
            """, .integer(customerId))
        {
            facts.append(FactJSON(kind: try Self.factKind(playKind: try row.text(0)), json: try row.text(1)))
        }
        for row in try rows(
            """
            SELECT o.fact_json FROM play_orders o
            WHERE o.app_id = (SELECT app_id FROM customers WHERE id = $1)
              AND o.purchase_token IN (\(Self.customerPurchases))
            ORDER BY o.id
            """, .integer(customerId))
        {
            facts.append(FactJSON(kind: .playOrder, json: try row.text(0)))
        }
        return facts
    }

    func customerInfoJSON(customerId: Int64, environment: AppStoreEnvironment) throws -> StoredCustomerInfoJSON? {
        try row(
            "SELECT info_json, version FROM customer_states WHERE customer_id = $1 AND environment = $2",
            .integer(customerId), .text(environment.rawValue)
        ).map { row throws(StoreError) in
            StoredCustomerInfoJSON(json: try row.text(0), version: try row.integer(1))
        }
    }
}

/// One stored fact's JSON (`fact_json`), as `StoreReader.facts(customerId:)` decodes it.
/// - Note: Immutable value; `Sendable`.
public struct FactJSON: Sendable, Hashable {
    public var kind: FactKind
    public var json: String

    public init(kind: FactKind, json: String) {
        self.kind = kind
        self.json = json
    }

    /// The fact this JSON holds; `corruptValue` if it does not decode.
    public func decode() throws(StoreError) -> Fact {
        switch kind {
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
