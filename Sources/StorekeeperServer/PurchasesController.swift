import AppStoreModels
import Entitlements
import HTTPServer
import StorekeeperIngestion

/// What an app posts for its user: signed transactions, receipts, restore requests. Each
/// answers the customer's `CustomerInfo` after the change.
/// - Note: Immutable and `Sendable`.
struct PurchasesController: Sendable {
    let apps: AppDirectory
    let ingestor: PurchaseIngestor

    struct PostTransactionBody: Decodable {
        var signedTransaction: String?
        var transactionId: String?
        var environment: String?
    }

    struct PostReceiptBody: Decodable {
        var receipt: String
        var environment: String?
    }

    struct RestoreBody: Decodable {
        var environment: String?
    }

    var routes: [APIRoute] {
        let errors: [Int: String?] = [
            400: "Error", 401: "Error", 403: "Error", 404: "Error", 409: "Error", 413: "Error", 415: "Error",
            502: "Error", 503: "Error",
        ]
        return [
            APIRoute(
                .post, "/v1/apps/{appId}/customers/{appUserId}/transactions", access: .appPublic,
                operationId: "postTransaction",
                summary: "Post a StoreKit 2 signed transaction or a transaction id; returns CustomerInfo.",
                tag: "customers", request: "PostTransaction", responses: errors.merging([200: "CustomerInfo"]) { $1 },
                handler: postTransaction),
            APIRoute(
                .post, "/v1/apps/{appId}/customers/{appUserId}/receipts", access: .appPublic,
                operationId: "postReceipt", summary: "Post a base64 StoreKit 1 app receipt; returns CustomerInfo.",
                tag: "customers", request: "PostReceipt", responses: errors.merging([200: "CustomerInfo"]) { $1 },
                handler: postReceipt),
            APIRoute(
                .post, "/v1/apps/{appId}/customers/{appUserId}/restore", access: .appPublic,
                operationId: "restoreCustomer",
                summary: "Re-fetch everything Apple knows for the customer's original transactions.",
                tag: "customers", request: "Restore", responses: errors.merging([200: "CustomerInfo"]) { $1 },
                handler: restore),
        ]
    }

    @Sendable func postTransaction(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let body = try RequestBody.decode(PostTransactionBody.self, from: request)
        let app = try await apps.app(context)
        let appUserId = try CustomersController.appUserId(context)
        let environment = try CustomersController.environment(body.environment)
        let info = try await ingest { () async throws(IngestionError) in
            try await ingestor.postTransaction(
                app: app, appUserId: appUserId, signedTransaction: body.signedTransaction,
                transactionId: body.transactionId, environment: environment)
        }
        return CustomersController.respond(info, request: request)
    }

    @Sendable func postReceipt(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let body = try RequestBody.decode(PostReceiptBody.self, from: request)
        let app = try await apps.app(context)
        let appUserId = try CustomersController.appUserId(context)
        let environment = try CustomersController.environment(body.environment)
        let info = try await ingest { () async throws(IngestionError) in
            try await ingestor.postReceipt(
                app: app, appUserId: appUserId, receipt: body.receipt, environment: environment)
        }
        return CustomersController.respond(info, request: request)
    }

    @Sendable func restore(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let body = request.body.isEmpty ? RestoreBody() : try RequestBody.decode(RestoreBody.self, from: request)
        let app = try await apps.app(context)
        let appUserId = try CustomersController.appUserId(context)
        let environment = try CustomersController.environment(body.environment)
        let info = try await ingest { () async throws(IngestionError) in
            try await ingestor.restore(app: app, appUserId: appUserId, environment: environment)
        }
        return CustomersController.respond(info, request: request)
    }

    private func ingest(_ body: () async throws(IngestionError) -> CustomerInfo) async throws -> CustomerInfo {
        do {
            return try await body()
        } catch {
            throw ErrorMapping.ingestionFailure(error)
        }
    }
}
