/// Whether the app delivered a working in-app purchase (consumption information V1; Apple deprecated it for `DeliveryStatus`).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum DeliveryStatusV1: Int32, Sendable, Hashable, Codable, CaseIterable {
    case deliveredAndWorkingProperly = 0
    case didNotDeliverDueToQualityIssue = 1
    case deliveredWrongItem = 2
    case didNotDeliverDueToServerOutage = 3
    case didNotDeliverDueToIngameCurrencyChange = 4
    case didNotDeliverForOtherReason = 5
}
