/// The body of Get Notification History: a date range and optional filters.
///
/// Dates are `Timestamp`s, so they always go out as whole milliseconds, which Apple requires.
/// Apple accepts at most one of `notificationType`, `transactionId` as a filter.
/// - Note: Immutable value; `Sendable`.
public struct NotificationHistoryRequest: Sendable, Hashable, Codable {
    public var startDate: Timestamp?
    public var endDate: Timestamp?
    public var notificationType: RawEnum<NotificationTypeV2>?
    public var notificationSubtype: RawEnum<Subtype>?
    public var transactionId: String?
    public var onlyFailures: Bool?

    public init(
        startDate: Timestamp? = nil, endDate: Timestamp? = nil,
        notificationType: RawEnum<NotificationTypeV2>? = nil,
        notificationSubtype: RawEnum<Subtype>? = nil, transactionId: String? = nil,
        onlyFailures: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }
}
