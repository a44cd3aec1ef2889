import Foundation
import GooglePlayModels
import HTTPServer

/// The Play simulator over HTTP, on Google's paths: the OAuth2 token endpoint (`POST /token`),
/// the push-signing key set (`GET /oauth2/v3/certs`), the Play Developer API purchase methods
/// under `/androidpublisher/v3/applications/{packageName}/purchases/…` and `…/orders` with Google's error
/// shape, and a small admin API (`/play-admin/…`) that drives the lifecycle from outside (the
/// interop test, the CLI).
public enum PlaySimulatorRoutes {
    public static func add(_ simulator: PlaySimulator, to router: inout Router, prefix: String = "") {
        router.add(.post, prefix + "/token") { request, _ in
            let form = FormBody.parse(request.body)
            switch await simulator.exchange(grantType: form["grant_type"], assertion: form["assertion"]) {
            case .success(let token): return try HTTPResponse.json(token)
            case .failure(let error): return try HTTPResponse.json(error, status: 400)
            }
        }
        router.add(.get, prefix + "/oauth2/v3/certs") { _, _ in
            HTTPResponse.json(data: await simulator.keySetJSON())
        }

        let base = prefix + "/androidpublisher/v3/applications/{packageName}/purchases"
        api(router: &router, .get, base + "/subscriptionsv2/tokens/{token}", simulator) { request, context in
            try HTTPResponse.json(
                await simulator.subscriptionV2(
                    packageName: try parameter(context, "packageName"), token: try parameter(context, "token")))
        }
        api(router: &router, .post, base + "/subscriptions/{subscriptionId}/tokens/{tokenAction}", simulator) {
            request, context in
            let (token, action) = try tokenAction(context)
            guard action == "acknowledge" else { throw PlaySimulatorError.unknownMethod }
            try await simulator.acknowledgeSubscription(
                packageName: try parameter(context, "packageName"),
                subscriptionId: try parameter(context, "subscriptionId"), token: token)
            return HTTPResponse(status: .ok)
        }
        api(router: &router, .get, base + "/products/{productId}/tokens/{token}", simulator) { request, context in
            try HTTPResponse.json(
                await simulator.product(
                    packageName: try parameter(context, "packageName"), productId: try parameter(context, "productId"),
                    token: try parameter(context, "token")))
        }
        api(router: &router, .post, base + "/products/{productId}/tokens/{tokenAction}", simulator) {
            request, context in
            let (token, action) = try tokenAction(context)
            let packageName = try parameter(context, "packageName")
            let productId = try parameter(context, "productId")
            switch action {
            case "acknowledge":
                try await simulator.acknowledgeProduct(packageName: packageName, productId: productId, token: token)
            case "consume":
                try await simulator.consumeProduct(packageName: packageName, productId: productId, token: token)
            default: throw PlaySimulatorError.unknownMethod
            }
            return HTTPResponse(status: .ok)
        }
        api(router: &router, .get, base + "/voidedpurchases", simulator) { request, context in
            func integer(_ name: String) throws(PlaySimulatorError) -> Int64? {
                guard let text = request.queryValue(name) else { return nil }
                guard let value = Int64(text) else { throw .invalidArgument("Invalid value for \(name).") }
                return value
            }
            let includePartial = request.queryValue("includeQuantityBasedPartialRefund") == "true"
            return try HTTPResponse.json(
                await simulator.voidedPurchases(
                    packageName: try parameter(context, "packageName"), startTime: try integer("startTime"),
                    endTime: try integer("endTime"), maxResults: try integer("maxResults").map { Int($0) },
                    type: try integer("type").map { Int($0) }, includePartial: includePartial,
                    pageToken: request.queryValue("token")))
        }
        let orders = prefix + "/androidpublisher/v3/applications/{packageName}/orders"
        api(router: &router, .get, orders + ":batchGet", simulator) { request, context in
            try HTTPResponse.json(
                await simulator.orders(
                    packageName: try parameter(context, "packageName"), orderIds: request.queryValues("orderIds")))
        }
        api(router: &router, .get, orders + "/{orderId}", simulator) { request, context in
            try HTTPResponse.json(
                await simulator.order(
                    packageName: try parameter(context, "packageName"), orderId: try parameter(context, "orderId")))
        }
        PlayAdminRoutes.add(simulator, to: &router, prefix: prefix)
    }

    /// An API route: authenticated with an access token, Google's error shape on failure.
    static func api(
        router: inout Router, _ method: HTTPMethod, _ pattern: String, _ simulator: PlaySimulator,
        _ handler: @escaping @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse
    ) {
        router.add(method, pattern) { request, context in
            do {
                try await simulator.authenticate(authorization: request.headers["Authorization"])
                return try await handler(request, context)
            } catch let error as PlaySimulatorError {
                return errorResponse(error)
            }
        }
    }

    static func errorResponse(_ error: PlaySimulatorError) -> HTTPResponse {
        HTTPResponse.json(data: GooglePlayJSON.encode(error.response), status: HTTPStatus(error.httpStatus))
    }

    static func parameter(_ context: RequestContext, _ name: String) throws(PlaySimulatorError) -> String {
        guard let value = context.parameters[name], !value.isEmpty else {
            throw .invalidArgument("Missing \(name).")
        }
        return value
    }

    /// `{token}:{action}` of the `tokens/…:acknowledge` paths.
    static func tokenAction(_ context: RequestContext) throws(PlaySimulatorError) -> (String, String) {
        let segment = try parameter(context, "tokenAction")
        guard let colon = segment.lastIndex(of: ":") else { throw .unknownMethod }
        return (String(segment[..<colon]), String(segment[segment.index(after: colon)...]))
    }
}

extension PlaySimulatorError {
    static let unknownMethod = PlaySimulatorError(404, "NOT_FOUND", "Method not found.", reason: "notFound")
}

/// `application/x-www-form-urlencoded` bodies (the token request).
enum FormBody {
    static func parse(_ body: Data) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body.prefix(64 * 1024), as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            guard let name = parts.first else { continue }
            fields[decode(name)] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }
}
