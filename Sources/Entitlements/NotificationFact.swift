import AppStoreModels

/// The envelope of a server notification: what happened and when Apple said so.
///
/// The signed transaction and renewal info inside a notification become their own facts;
/// the envelope adds what they cannot say: that a billing retry or a grace period ended
/// (`EXPIRED`, `GRACE_PERIOD_EXPIRED`) and that a renewal failed (`DID_FAIL_TO_RENEW`).
/// - Note: Immutable value; `Sendable`.
public struct NotificationFact: Sendable, Hashable, Codable {
    /// `notificationUUID` (V2); for V1 a caller-made stable id.
    public var notificationId: String
    /// V2 `notificationType` as sent (unknown types are kept and ignored).
    public var type: String
    public var subtype: String?
    public var signedDate: Timestamp
    public var environment: AppStoreEnvironment
    public var originalTransactionId: String?
    public var transactionId: String?
    public var productId: String?

    public init(
        notificationId: String, type: String, subtype: String? = nil, signedDate: Timestamp,
        environment: AppStoreEnvironment, originalTransactionId: String? = nil, transactionId: String? = nil,
        productId: String? = nil
    ) {
        self.notificationId = notificationId
        self.type = type
        self.subtype = subtype
        self.signedDate = signedDate
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.productId = productId
    }

    /// Maps a V1 notification (`notification_type`) onto the V2 type and subtype it
    /// corresponds to; returns `nil` for V1 types without a V2 meaning the engine uses.
    /// `observedAt` stands in for the signed date V1 lacks.
    public init?(
        legacyV1Type: String, notificationId: String, observedAt: Timestamp, environment: AppStoreEnvironment,
        originalTransactionId: String?, productId: String?
    ) {
        let mapped: (NotificationTypeV2, Subtype?)
        switch legacyV1Type {
        case "INITIAL_BUY": mapped = (.subscribed, .initialBuy)
        case "INTERACTIVE_RENEWAL": mapped = (.subscribed, .resubscribe)
        case "DID_RENEW": mapped = (.didRenew, nil)
        case "DID_RECOVER": mapped = (.didRenew, .billingRecovery)
        case "DID_FAIL_TO_RENEW": mapped = (.didFailToRenew, nil)
        case "DID_CHANGE_RENEWAL_PREF": mapped = (.didChangeRenewalPref, nil)
        case "DID_CHANGE_RENEWAL_STATUS": mapped = (.didChangeRenewalStatus, nil)
        case "PRICE_INCREASE_CONSENT": mapped = (.priceIncrease, .pending)
        case "CANCEL", "REFUND": mapped = (.refund, nil)
        case "REVOKE": mapped = (.revoke, nil)
        default: return nil
        }
        self.init(
            notificationId: notificationId, type: mapped.0.rawValue, subtype: mapped.1?.rawValue,
            signedDate: observedAt, environment: environment, originalTransactionId: originalTransactionId,
            productId: productId)
    }
}
