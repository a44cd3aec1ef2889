/// The customer's reason for a refund request.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum ConsumptionRequestReason: String, Sendable, Hashable, Codable, CaseIterable {
    case unintendedPurchase = "UNINTENDED_PURCHASE"
    case fulfillmentIssue = "FULFILLMENT_ISSUE"
    case unsatisfiedWithPurchase = "UNSATISFIED_WITH_PURCHASE"
    case legal = "LEGAL"
    case other = "OTHER"
}
