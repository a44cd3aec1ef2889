import AppStoreModels
import Foundation
import HTTPServer
import StorekeeperIngestion

/// Google Play's two ways in, as thin adapters over `GooglePlayIngestion`:
/// - `POST /v1/apps/{appId}/notifications/googleplay`: the Pub/Sub push endpoint. No API key:
///   the push's OIDC token is checked (a refusal is 401 `push_unauthenticated`, counted by
///   rule, nothing stored); 200 only after the message and its facts are committed (a
///   redelivered `messageId` is 200 too). Any other answer makes Pub/Sub redeliver.
/// - `POST /v1/apps/{appId}/customers/{appUserId}/purchases/googleplay`: the app posts a
///   purchase token; the answer is the customer's CustomerInfo.
/// - Note: Immutable and `Sendable`.
struct GooglePlayController: Sendable {
    let googlePlay: GooglePlayIngestion
    let metrics: ServerMetrics

    struct PostPurchaseBody: Decodable {
        var packageName: String
        var productId: String
        var purchaseToken: String
        var type: GooglePlayIngestion.PurchaseType
    }

    var routes: [APIRoute] {
        [
            APIRoute(
                .post, "/v1/apps/{appId}/notifications/googleplay", access: .googlePlayPush,
                operationId: "receiveGooglePlayNotification",
                summary:
                    "Cloud Pub/Sub push of a Google Play real-time developer notification, authenticated by its OIDC bearer token.",
                tag: "notifications", request: "PubSubPush",
                responses: [
                    200: "GooglePlayNotificationAccepted", 400: "Error", 401: "Error", 404: "Error", 409: "Error",
                    413: "Error", 415: "Error", 502: "Error", 503: "Error",
                ],
                handler: receive),
            APIRoute(
                .post, "/v1/apps/{appId}/customers/{appUserId}/purchases/googleplay", access: .appPublic,
                operationId: "postGooglePlayPurchase",
                summary:
                    "Post a Google Play purchase token; Storekeeper reads it from Google and returns CustomerInfo.",
                tag: "customers", request: "PostGooglePlayPurchase",
                responses: [
                    200: "CustomerInfo", 400: "Error", 401: "Error", 403: "Error", 404: "Error", 409: "Error",
                    413: "Error", 415: "Error", 502: "Error", 503: "Error",
                ],
                handler: postPurchase),
        ]
    }

    @Sendable func receive(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let appId = try context.parameter("appId")
        let outcome: GooglePlayIngestion.PushOutcome
        do {
            outcome = try await googlePlay.receivePush(
                appId: appId, authorization: request.headers["Authorization"], body: request.body)
        } catch {
            if error.code == .pushUnauthenticated { metrics.recordPlayPushRefusal(rule: error.rule ?? "unknown") }
            throw ErrorMapping.ingestionFailure(error)
        }
        metrics.recordNotification(type: "googleplay.\(outcome.kind)", outcome: outcome.outcome.rawValue)
        return JSONResponse.make(Accepted(outcome: outcome.outcome.rawValue, kind: outcome.kind))
    }

    struct Accepted: Encodable {
        var outcome: String
        var kind: String
    }

    @Sendable func postPurchase(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let body = try RequestBody.decode(PostPurchaseBody.self, from: request)
        let appId = try context.parameter("appId")
        let appUserId = try CustomersController.appUserId(context)
        let commit: FactCommit
        do {
            commit = try await googlePlay.postPurchase(
                appId: appId, appUserId: appUserId, packageName: body.packageName, productId: body.productId,
                purchaseToken: body.purchaseToken, type: body.type)
        } catch {
            throw ErrorMapping.ingestionFailure(error)
        }
        guard let info = commit.customerInfo else {
            throw ErrorMapping.ingestionFailure(
                IngestionError(.internal, "The purchase was stored without a customer."))
        }
        return CustomersController.respond(info, request: request)
    }
}
