/// Why the transaction happened: a customer's purchase or an automatic renewal.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum TransactionReason: String, Sendable, Hashable, Codable, CaseIterable {
    case purchase = "PURCHASE"
    case renewal = "RENEWAL"
}
