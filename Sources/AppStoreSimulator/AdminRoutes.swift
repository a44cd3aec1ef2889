import AppStoreModels
import Foundation
import HTTPServer

/// The simulator's own control API under `/simulator/v1`: catalog, customers, actions (customer
/// journeys and store events), time, loss, rate and outage settings, and inspection.
///
/// Unauthenticated on purpose: it is a local test tool bound to loopback by default; Apple's
/// API next to it is authenticated exactly like Apple's.
enum AdminRoutes {
    static func add(_ simulator: AppStoreSimulator, to router: inout Router, prefix: String) {
        let base = prefix + "/simulator/v1"
        func handle(
            _ method: HTTPMethod, _ path: String,
            _ body: @escaping @Sendable (HTTPRequest, RequestContext) async throws(SimulatorError) -> HTTPResponse
        ) {
            router.add(method, base + path) { request, context in
                do {
                    return try await body(request, context)
                } catch let error as SimulatorError {
                    return adminError(error)
                }
            }
        }

        handle(.get, "/health") { _, _ throws(SimulatorError) in
            ServerAPIRoutes.json(
                [
                    "environment": simulator.environment.rawValue,
                    "now": String(simulator.clock.now.millisecondsSince1970),
                ])
        }
        handle(.get, "/ca/root.pem") { _, _ throws(SimulatorError) in
            HTTPResponse.text(simulator.authority.root.pem)
        }
        handle(.get, "/apps") { _, _ throws(SimulatorError) in ServerAPIRoutes.json(await simulator.apps()) }
        handle(.post, "/apps") { request, _ throws(SimulatorError) in
            let app = try decode(SimulatedApp.self, request)
            try await simulator.addApp(app)
            return ServerAPIRoutes.json(app, status: .created)
        }
        handle(.post, "/customers") { request, _ throws(SimulatorError) in
            let customer = try decode(SimulatedCustomer.self, request)
            await simulator.addCustomer(customer)
            return ServerAPIRoutes.json(customer, status: .created)
        }
        handle(.post, "/actions") { request, _ throws(SimulatorError) in
            ServerAPIRoutes.json(try await simulator.perform(try decode(SimulatorAction.self, request)))
        }
        handle(.post, "/tick") { _, _ throws(SimulatorError) in
            await simulator.tick()
            return ServerAPIRoutes.json(["now": simulator.clock.now])
        }
        handle(.get, "/notifications") { _, _ throws(SimulatorError) in
            ServerAPIRoutes.json(await simulator.producedNotifications())
        }
        handle(.put, "/settings/notification-loss") { request, _ throws(SimulatorError) in
            let policy = try decode(NotificationLossPolicy.self, request)
            guard policy.fraction >= 0, policy.fraction <= 1 else {
                throw SimulatorError(.invalidAction, "fraction must be between 0 and 1 (1: never delivered)")
            }
            await simulator.setLossPolicy(policy)
            return HTTPResponse(status: 204)
        }
        handle(.put, "/settings/rate-limit") { request, _ throws(SimulatorError) in
            let limit =
                request.body.isEmpty || request.body == Data("null".utf8)
                ? nil : try decode(RateLimit.self, request)
            await simulator.setRateLimit(limit)
            return HTTPResponse(status: 204)
        }
        handle(.get, "/settings/server-api-rate-limits") { _, _ throws(SimulatorError) in
            ServerAPIRoutes.json(await simulator.currentServerAPIRateLimits)
        }
        handle(.put, "/settings/server-api-rate-limits") { request, _ throws(SimulatorError) in
            let limits = try decode(ServerAPIRateLimits.self, request)
            guard limits.isValid else {
                throw SimulatorError(
                    .invalidAction,
                    "percent must be above 0 and at most 1000000 (null: no limit), burstSeconds 0.001 to 3600")
            }
            await simulator.setServerAPIRateLimits(limits)
            return HTTPResponse(status: 204)
        }
        handle(.get, "/settings/outage") { _, _ throws(SimulatorError) in
            ServerAPIRoutes.json(Outage(active: await simulator.isInOutage))
        }
        handle(.put, "/settings/outage") { request, _ throws(SimulatorError) in
            await simulator.setOutage(try decode(Outage.self, request).active)
            return HTTPResponse(status: 204)
        }
        handle(.get, "/customers/{customer}/receipt") { request, context throws(SimulatorError) in
            let customer = context.parameters["customer"] ?? ""
            var bundleId = request.queryValue("bundleId")
            if bundleId == nil { bundleId = try await simulator.onlyBundleId() }
            let receipt = try await simulator.appReceipt(customer: customer, bundleId: bundleId ?? "")
            return ServerAPIRoutes.json(["receiptData": Data(receipt).base64EncodedString()])
        }
        handle(.get, "/customers/{customer}/transactions") { _, context throws(SimulatorError) in
            let customer = context.parameters["customer"] ?? ""
            return ServerAPIRoutes.json(
                [
                    "transactionIds": await simulator.transactionIds(customer: customer),
                    "signedTransactions": try await simulator.signedTransactions(customer: customer),
                    "signedRenewalInfos": try await simulator.signedRenewalInfos(customer: customer),
                ])
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ request: HTTPRequest) throws(SimulatorError) -> T {
        do {
            return try AppStoreJSON.decode(T.self, from: request.body)
        } catch {
            throw SimulatorError(.invalidAction, error.description)
        }
    }

    /// `PUT /settings/outage` body: `{"active": true}` starts a simulated outage of the App
    /// Store's APIs, `{"active": false}` ends it.
    struct Outage: Codable, Sendable {
        var active: Bool
    }

    static func adminError(_ error: SimulatorError) -> HTTPResponse {
        if error.code == .appStoreAPI || error.code == .rateLimited || error.code == .unauthenticated {
            return ServerAPIRoutes.errorResponse(error)
        }
        return ServerAPIRoutes.json(
            ["error": error.code.rawValue, "message": error.message], status: HTTPStatus(error.httpStatus))
    }
}
