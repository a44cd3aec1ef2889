/// One page of Get Notification History: notifications Apple sent (or tried to send) and the token
/// for the next page, passed as the `paginationToken` query parameter.
/// - Note: Immutable value; `Sendable`.
public struct NotificationHistoryResponse: Sendable, Hashable, Codable {
    public var paginationToken: String?
    public var hasMore: Bool?
    public var notificationHistory: [NotificationHistoryResponseItem]?

    public init(
        paginationToken: String? = nil, hasMore: Bool? = nil,
        notificationHistory: [NotificationHistoryResponseItem]? = nil
    ) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}
