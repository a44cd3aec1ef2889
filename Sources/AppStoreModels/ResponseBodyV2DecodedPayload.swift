/// The decoded `signedPayload` of an App Store Server Notification V2.
///
/// Exactly one of `data`, `summary`, `externalPurchaseToken` or `appData` is present,
/// depending on the notification type.
/// - Note: Immutable value; `Sendable`.
public struct ResponseBodyV2DecodedPayload: Sendable, Hashable, Codable {
    public var notificationType: RawEnum<NotificationTypeV2>?
    public var subtype: RawEnum<Subtype>?
    public var notificationUUID: String?
    public var data: NotificationData?
    public var version: String?
    public var signedDate: Timestamp?
    public var summary: Summary?
    public var externalPurchaseToken: ExternalPurchaseToken?
    public var appData: AppData?

    public init() {}
}
