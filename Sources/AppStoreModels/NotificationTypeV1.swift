/// The type of an App Store Server Notification V1 (`notification_type`); Apple deprecated V1 but still sends it to apps that have not moved.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum NotificationTypeV1: String, Sendable, Hashable, Codable, CaseIterable {
    case initialBuy = "INITIAL_BUY"
    case cancel = "CANCEL"
    case didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
    case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS"
    case didFailToRenew = "DID_FAIL_TO_RENEW"
    case didRecover = "DID_RECOVER"
    case didRenew = "DID_RENEW"
    case interactiveRenewal = "INTERACTIVE_RENEWAL"
    case priceIncreaseConsent = "PRICE_INCREASE_CONSENT"
    case refund = "REFUND"
    case revoke = "REVOKE"
    case consumptionRequest = "CONSUMPTION_REQUEST"
    case renewal = "RENEWAL"
}
