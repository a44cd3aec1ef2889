import AppStoreModels
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion

/// What the app tells Storekeeper for consumption answers (public key, as the app itself
/// reports it): the customer's consent to share consumption data with Apple
/// (`PUT …/customers/{appUserId}/consumption-consent`), and a transaction's delivery status and
/// usage (`PUT …/transactions/{transactionId}/consumption`). The latest report replaces the
/// previous one; `ConsumptionResponder` reads them when Apple asks.
/// - Note: Immutable and `Sendable`.
struct ConsumptionController: Sendable {
    let apps: AppDirectory
    let clock: ServerClock

    struct ConsentBody: Codable {
        var consented: Bool
    }

    struct ConsentView: Encodable {
        var appUserId: String
        var consented: Bool
    }

    struct ReportBody: Codable {
        var deliveryStatus: String
        /// Thousandths of a percent (0 to 100000); omitted: not measured.
        var consumptionPercentage: Int?
    }

    struct ReportView: Encodable {
        var transactionId: String
        var deliveryStatus: String
        var consumptionPercentage: Int?
    }

    var routes: [APIRoute] {
        let errors: [Int: String?] = [400: "Error", 401: "Error", 403: "Error", 404: "Error", 415: "Error"]
        return [
            APIRoute(
                .put, "/v1/apps/{appId}/customers/{appUserId}/consumption-consent", access: .appPublic,
                operationId: "setConsumptionConsent",
                summary:
                    "Record whether the customer (known by its app user id or an alias) consented to their consumption data being sent to Apple when they ask for a refund; without consent no consumption answer is sent.",
                tag: "consumption", request: "ConsumptionConsent",
                responses: errors.merging([200: "ConsumptionConsentView"]) { $1 }, handler: setConsent),
            APIRoute(
                .put, "/v1/apps/{appId}/transactions/{transactionId}/consumption", access: .appSecret,
                operationId: "reportConsumption",
                summary:
                    "Report a transaction's delivery status and usage (thousandths of a percent), sent to Apple if the customer asks for a refund. The app's backend reports it (secret key): what the app itself says is what a refund requester controls.",
                tag: "consumption", request: "ConsumptionReport",
                responses: errors.merging([200: "ConsumptionReportView"]) { $1 }, handler: report),
        ]
    }

    @Sendable func setConsent(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let body = try RequestBody.decode(ConsentBody.self, from: request)
        let app = try await apps.app(context)
        let appUserId = try CustomersController.appUserId(context)
        let (appId, now) = (app.id, clock.now())
        // Recorded under the customer's own id, so consent given through an alias is found when
        // Apple asks about the customer; an id the app never used is no customer, and no row.
        let owner: String? = try await apps.write("consumption_consent") { transaction in
            guard let customer = try transaction.customer(appId: appId, knownAs: appUserId) else { return nil }
            try transaction.recordConsumptionConsent(
                appId: appId, appUserId: customer.appUserId, consented: body.consented, at: now)
            return customer.appUserId
        }
        guard let owner else { throw CustomersController.customerNotFound }
        return try HTTPResponse.json(ConsentView(appUserId: owner, consented: body.consented))
    }

    @Sendable func report(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let body = try RequestBody.decode(ReportBody.self, from: request)
        let app = try await apps.app(context)
        let transactionId = try context.parameter("transactionId")
        guard (1...64).contains(transactionId.utf8.count), transactionId.utf8.allSatisfy({ (48...57).contains($0) })
        else {
            throw HTTPError.badRequest("transactionId must be 1 to 64 digits.", code: "invalid_path_parameter")
        }
        guard DeliveryStatus(rawValue: body.deliveryStatus) != nil else {
            throw HTTPError.badRequest(
                "deliveryStatus must be one of "
                    + DeliveryStatus.allCases.map(\.rawValue).joined(separator: ", ") + ".",
                code: "invalid_body")
        }
        if let percentage = body.consumptionPercentage, !(0...100_000).contains(percentage) {
            throw HTTPError.badRequest(
                "consumptionPercentage must be 0 to 100000 (thousandths of a percent).", code: "invalid_body")
        }
        if body.deliveryStatus != DeliveryStatus.delivered.rawValue, let percentage = body.consumptionPercentage,
            percentage != 0
        {
            throw HTTPError.badRequest(
                "consumptionPercentage must be 0 for an item that was not delivered.", code: "invalid_body")
        }
        let (appId, now) = (app.id, clock.now())
        let report = ConsumptionReport(
            deliveryStatus: body.deliveryStatus, consumptionPercentage: body.consumptionPercentage.map { Int32($0) },
            recordedAt: now)
        try await apps.write("consumption_report") { transaction in
            try transaction.recordConsumptionReport(appId: appId, transactionId: transactionId, report: report)
        }
        return try HTTPResponse.json(
            ReportView(
                transactionId: transactionId, deliveryStatus: body.deliveryStatus,
                consumptionPercentage: body.consumptionPercentage))
    }
}
