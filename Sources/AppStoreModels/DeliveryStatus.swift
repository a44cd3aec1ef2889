/// Whether the app delivered a working In-App Purchase (Send Consumption Information, API 1.19+).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum DeliveryStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case delivered = "DELIVERED"
    case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
    case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
    case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
    case undeliveredOther = "UNDELIVERED_OTHER"
}
