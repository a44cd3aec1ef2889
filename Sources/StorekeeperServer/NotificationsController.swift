import HTTPServer
import StorekeeperIngestion

/// `POST /v1/apps/{appId}/notifications/appstore`: the URL an app sets as its App Store Server
/// Notifications URL. 200 only after the notification is committed (a duplicate is 200 too).
/// - Note: Immutable and `Sendable`.
struct NotificationsController: Sendable {
    let apps: AppDirectory
    let ingestor: NotificationIngestor

    var routes: [APIRoute] {
        [
            APIRoute(
                .post, "/v1/apps/{appId}/notifications/appstore", access: .appStore,
                operationId: "receiveAppStoreNotification",
                summary: "App Store Server Notifications V2 (signedPayload) or V1 (by shape).", tag: "notifications",
                request: "AppStoreNotification",
                responses: [
                    200: "NotificationAccepted", 400: "Error", 401: "Error", 404: "Error", 409: "Error",
                    413: "Error", 415: "Error", 503: "Error",
                ],
                handler: receive)
        ]
    }

    @Sendable func receive(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        try RequestBody.requireJSON(request)
        let app = try await apps.app(context)
        do {
            return JSONResponse.make(try await ingestor.ingest(app: app, body: request.body))
        } catch {
            throw ErrorMapping.ingestionFailure(error)
        }
    }
}
