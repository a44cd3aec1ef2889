import AppStoreModels
import Foundation
import HTTPServer
import StorekeeperIngestion

/// On-demand sync, the app's check at launch: `POST …/customers/{appUserId}/sync` (public key)
/// asks the App Store now for the customer's subscription statuses (and transaction history
/// where the statuses say nothing), ingests what it says and answers the fresh `CustomerInfo`.
/// One sync per customer per `customerSyncIntervalSeconds`: sooner is 429 with `Retry-After`.
/// - Note: Immutable and `Sendable`.
struct CustomerSyncController: Sendable {
    let apps: AppDirectory
    let sync: CustomerSync
    let metrics: ServerMetrics

    var routes: [APIRoute] {
        let errors: [Int: String?] = [
            400: "Error", 401: "Error", 403: "Error", 404: "Error", 409: "Error", 415: "Error", 429: "Error",
            502: "Error", 503: "Error",
        ]
        return [
            APIRoute(
                .post, "/v1/apps/{appId}/customers/{appUserId}/sync", access: .appPublic,
                operationId: "syncCustomer",
                summary:
                    "Ask the App Store now for the customer's subscription statuses (and history where they say nothing), ingest them and return the fresh CustomerInfo; at most once per customer per customerSyncIntervalSeconds (429 with Retry-After).",
                tag: "customers", request: "Restore", responses: errors.merging([200: "CustomerInfo"]) { $1 },
                handler: syncCustomer)
        ]
    }

    @Sendable func syncCustomer(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let body =
            request.body.isEmpty
            ? PurchasesController.RestoreBody()
            : try RequestBody.decode(PurchasesController.RestoreBody.self, from: request)
        let app = try await apps.app(context)
        let appUserId = try CustomersController.appUserId(context)
        let environment = try CustomersController.environment(body.environment)
        do {
            let info = try await sync.sync(app: app, appUserId: appUserId, environment: environment)
            metrics.recordCustomerSync(outcome: "synced")
            return CustomersController.respond(info, request: request)
        } catch {
            metrics.recordCustomerSync(outcome: error.code == .rateLimited ? "rate_limited" : "failed")
            throw ErrorMapping.ingestionFailure(error)
        }
    }
}
