import AppStoreModels
import Entitlements
import Foundation
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
                summary:
                    "Post a StoreKit 2 signed transaction or a transaction id; returns CustomerInfo and whether the App Store completed it.",
                tag: "customers", request: "PostTransaction",
                responses: errors.merging([200: "PostedTransaction"]) { $1 }, handler: postTransaction),
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
        let posted: PostedTransaction
        do {
            posted = try await ingestor.postTransaction(
                app: app, appUserId: appUserId, signedTransaction: body.signedTransaction,
                transactionId: body.transactionId, environment: environment)
        } catch {
            throw ErrorMapping.ingestionFailure(error)
        }
        return Self.respond(posted, request: request)
    }

    /// CustomerInfo plus `"completion"`. The ETag is the customer's (the CustomerInfo alone, as
    /// a GET answers it), so a client may send it back as `If-None-Match` on GET.
    static func respond(_ posted: PostedTransaction, request: HTTPRequest) -> HTTPResponse {
        let state = AppStoreJSON.encode(posted.customerInfo)
        var response = HTTPResponse.json(data: AppStoreJSON.encode(PostedTransactionBody(posted)))
        response.headers["ETag"] = CustomersController.etag(of: state)
        response.headers["Cache-Control"] = "private, no-cache"
        return response
    }

    /// The answer of a transaction post: the members of CustomerInfo and `completion`.
    struct PostedTransactionBody: Encodable {
        let posted: PostedTransaction

        init(_ posted: PostedTransaction) { self.posted = posted }

        enum CodingKeys: String, CodingKey { case completion }

        func encode(to encoder: any Encoder) throws {
            // Both write into the same top-level object.
            try posted.customerInfo.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(posted.completion, forKey: .completion)
        }
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
