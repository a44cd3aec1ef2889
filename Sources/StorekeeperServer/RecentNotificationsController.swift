import AppStoreModels
import HTTPServer
import Storage

/// `GET /v1/apps/{appId}/notifications`: the App Store notifications an app received, newest
/// first, with what became of each (`applied`, `unclaimed`, `recorded`), by outcome and type,
/// paged by `cursor` (the last `id` seen). Signed payloads are not listed: the customer's facts
/// route shows them.
/// - Note: Immutable and `Sendable`.
struct RecentNotificationsController: Sendable {
    let apps: AppDirectory

    /// The outcomes a stored notification can have (`FactBatch.Outcome` without `duplicate`,
    /// which is never stored a second time).
    static let outcomes = ["applied", "unclaimed", "recorded"]

    struct NotificationView: Encodable {
        var id: Int64
        var notificationUUID: String
        var notificationType: String
        var subtype: String?
        var environment: AppStoreEnvironment?
        var originalTransactionId: String?
        var signedDate: Timestamp
        var receivedAt: Timestamp
        var outcome: String?

        init(_ summary: NotificationSummary) {
            id = summary.id
            notificationUUID = summary.notificationUUID
            notificationType = summary.type
            subtype = summary.subtype
            environment = summary.environment
            originalTransactionId = summary.originalTransactionId
            signedDate = summary.signedDate
            receivedAt = summary.receivedAt
            outcome = summary.outcome
        }
    }

    struct NotificationPage: Encodable {
        var notifications: [NotificationView]
        var nextCursor: String?
    }

    var routes: [APIRoute] {
        [
            APIRoute(
                .get, "/v1/apps/{appId}/notifications", access: .appSecret, operationId: "listRecentNotifications",
                summary: "The app's App Store notifications, newest first, with their outcome; by outcome and type.",
                tag: "notifications",
                responses: [
                    200: "NotificationPage", 400: "Error", 401: "Error", 403: "Error", 404: "Error", 409: "Error",
                    503: "Error",
                ],
                query: ["outcome", "type", "cursor", "limit"], handler: list)
        ]
    }

    @Sendable func list(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let outcome = request.queryValue("outcome").flatMap { $0.isEmpty ? nil : $0 }
        if let outcome, !Self.outcomes.contains(outcome) {
            throw HTTPError.badRequest("outcome must be applied, unclaimed or recorded.", code: "invalid_query")
        }
        let type = request.queryValue("type").flatMap { $0.isEmpty ? nil : $0 }
        if let type, !Self.isNotificationType(type) {
            throw HTTPError.badRequest(
                "type must be a notification type such as DID_RENEW (1 to 64 of A-Z, 0-9 and _).",
                code: "invalid_query")
        }
        let filter = NotificationFilter(
            outcome: outcome, type: type, before: try RequestBody.cursor(request),
            limit: try RequestBody.limit(request))
        let app = try await apps.app(context)
        let appId = app.id
        let notifications = try await apps.read { reader in try reader.recentNotifications(appId: appId, filter) }
        return JSONResponse.make(
            NotificationPage(
                notifications: notifications.map(NotificationView.init),
                nextCursor: notifications.count == filter.limit ? notifications.last.map { String($0.id) } : nil))
    }

    /// Apple's notification types (V2 and V1) are upper-case words joined by `_`.
    static func isNotificationType(_ value: String) -> Bool {
        (1...64).contains(value.utf8.count)
            && value.utf8.allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
    }
}
