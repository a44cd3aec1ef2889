import AppStoreModels
import Foundation
import HTTPServer

/// The App Store Server API (and Retention Messaging API) on Apple's paths, JWT-authenticated,
/// with Apple's error payloads: `{"errorCode": 4040010, "errorMessage": "…"}`, HTTP status from
/// the code's first three digits, 401 with an empty-ish text body like Apple's, 429 with
/// `Retry-After`.
enum ServerAPIRoutes {
    typealias Operation =
        @Sendable (AppStoreSimulator, String, HTTPRequest, RequestContext) async throws(SimulatorError)
        -> HTTPResponse

    static func add(_ simulator: AppStoreSimulator, to router: inout Router, prefix: String) {
        func route(_ method: HTTPMethod, _ path: String, _ operation: @escaping Operation) {
            router.add(method, prefix + path) { request, context in
                do {
                    let bundleId = try await simulator.authenticate(
                        authorization: request.headers["Authorization"], route: "\(method.rawValue) \(path)")
                    await simulator.record(
                        ServerAPICall(
                            route: "\(method.rawValue) \(path)",
                            transactionId: context.parameters["transactionId"]
                                ?? context.parameters["originalTransactionId"]))
                    return try await operation(simulator, bundleId, request, context)
                } catch let error as SimulatorError {
                    return errorResponse(error)
                }
            }
        }

        route(.get, "/inApps/v1/transactions/{transactionId}") {
            simulator, bundleId, _, context throws(SimulatorError) in
            json(
                try await simulator.transactionInfo(
                    bundleId: bundleId, transactionId: try parameter(context, "transactionId")))
        }
        for version in [1, 2] {
            route(.get, "/inApps/v\(version)/history/{transactionId}") {
                simulator, bundleId, request, context throws(SimulatorError) in
                json(
                    try await simulator.transactionHistory(
                        bundleId: bundleId, transactionId: try parameter(context, "transactionId"),
                        query: try historyQuery(request), version: version))
            }
        }
        route(.get, "/inApps/v1/subscriptions/{transactionId}") {
            simulator, bundleId, request, context throws(SimulatorError) in
            var filter: [Status] = []
            for value in request.queryValues("status") {
                guard let number = Int32(value), let status = Status(rawValue: number) else {
                    throw .api(.invalidStatus, "Invalid status.")
                }
                filter.append(status)
            }
            return json(
                try await simulator.subscriptionStatuses(
                    bundleId: bundleId, transactionId: try parameter(context, "transactionId"), filter: filter))
        }
        route(.get, "/inApps/v2/refund/lookup/{transactionId}") {
            simulator, bundleId, request, context throws(SimulatorError) in
            json(
                try await simulator.refundHistory(
                    bundleId: bundleId, transactionId: try parameter(context, "transactionId"),
                    revision: request.queryValue("revision")))
        }
        route(.get, "/inApps/v1/lookup/{orderId}") { simulator, bundleId, _, context throws(SimulatorError) in
            json(try await simulator.lookUpOrder(bundleId: bundleId, orderId: try parameter(context, "orderId")))
        }
        route(.get, "/inApps/v1/transactions/appTransactions/{transactionId}") {
            simulator, bundleId, _, context throws(SimulatorError) in
            json(
                try await simulator.appTransactionInfo(
                    bundleId: bundleId, transactionId: try parameter(context, "transactionId")))
        }
        route(.post, "/inApps/v1/transactions/{transactionId}/finish") {
            simulator, bundleId, _, context throws(SimulatorError) in
            try await simulator.finishTransaction(
                bundleId: bundleId, transactionId: try parameter(context, "transactionId"))
            return HTTPResponse(status: 200)
        }
        route(.put, "/inApps/v1/transactions/{originalTransactionId}/appAccountToken") {
            simulator, bundleId, request, context throws(SimulatorError) in
            try await simulator.setAppAccountToken(
                bundleId: bundleId, originalTransactionId: try parameter(context, "originalTransactionId"),
                body: request.body)
            return HTTPResponse(status: 200)
        }
        for version in [1, 2] {
            route(.put, "/inApps/v\(version)/transactions/consumption/{transactionId}") {
                simulator, bundleId, request, context throws(SimulatorError) in
                try await simulator.sendConsumptionInformation(
                    bundleId: bundleId, transactionId: try parameter(context, "transactionId"), body: request.body,
                    version: version)
                return HTTPResponse(status: 202)
            }
        }
        route(.put, "/inApps/v1/subscriptions/extend/{originalTransactionId}") {
            simulator, bundleId, request, context throws(SimulatorError) in
            json(
                try await simulator.extendRenewalDate(
                    bundleId: bundleId, originalTransactionId: try parameter(context, "originalTransactionId"),
                    body: request.body))
        }
        route(.post, "/inApps/v1/subscriptions/extend/mass") { simulator, bundleId, request, _ throws(SimulatorError) in
            json(try await simulator.massExtendRenewalDate(bundleId: bundleId, body: request.body))
        }
        route(.get, "/inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}") {
            simulator, bundleId, _, context throws(SimulatorError) in
            json(
                try await simulator.massExtensionStatus(
                    bundleId: bundleId, productId: try parameter(context, "productId"),
                    requestIdentifier: try parameter(context, "requestIdentifier")))
        }
        route(.post, "/inApps/v1/notifications/history") { simulator, bundleId, request, _ throws(SimulatorError) in
            guard let body = try? AppStoreJSON.decode(NotificationHistoryRequest.self, from: request.body) else {
                throw .api(.generalBadRequest, "Bad request.")
            }
            return json(
                try await simulator.notificationHistory(
                    bundleId: bundleId, request: body, paginationToken: request.queryValue("paginationToken")))
        }
        route(.post, "/inApps/v1/notifications/test") { simulator, bundleId, _, _ throws(SimulatorError) in
            let response = try await simulator.requestTestNotification(bundleId: bundleId)
            await simulator.deliverDue()
            return json(response)
        }
        route(.get, "/inApps/v1/notifications/test/{testNotificationToken}") {
            simulator, bundleId, _, context throws(SimulatorError) in
            json(
                try await simulator.testNotificationStatus(
                    bundleId: bundleId, token: try parameter(context, "testNotificationToken")))
        }
        addRetentionMessaging(to: route)
    }

    private static func addRetentionMessaging(to route: (HTTPMethod, String, @escaping Operation) -> Void) {
        route(.put, "/inApps/v1/messaging/image/{imageIdentifier}") {
            simulator, bundleId, request, context throws(SimulatorError) in
            let size = request.queryValue("imageSize").flatMap(ImageSize.init(rawValue:))
            try await simulator.uploadImage(
                bundleId: bundleId, id: try uuid(context, "imageIdentifier"), size: size, bytes: request.body)
            return HTTPResponse(status: 200)
        }
        route(.delete, "/inApps/v1/messaging/image/{imageIdentifier}") {
            simulator, bundleId, _, context throws(SimulatorError) in
            try await simulator.deleteImage(bundleId: bundleId, id: try uuid(context, "imageIdentifier"))
            return HTTPResponse(status: 200)
        }
        route(.get, "/inApps/v1/messaging/image/list") { simulator, bundleId, _, _ throws(SimulatorError) in
            json(await simulator.imageList(bundleId: bundleId))
        }
        route(.put, "/inApps/v1/messaging/message/{messageIdentifier}") {
            simulator, bundleId, request, context throws(SimulatorError) in
            guard let body = try? AppStoreJSON.decode(UploadMessageRequestBody.self, from: request.body) else {
                throw .api(.generalBadRequest, "Bad request.")
            }
            try await simulator.uploadMessage(
                bundleId: bundleId, id: try uuid(context, "messageIdentifier"), body: body)
            return HTTPResponse(status: 200)
        }
        route(.delete, "/inApps/v1/messaging/message/{messageIdentifier}") {
            simulator, bundleId, _, context throws(SimulatorError) in
            try await simulator.deleteMessage(bundleId: bundleId, id: try uuid(context, "messageIdentifier"))
            return HTTPResponse(status: 200)
        }
        route(.get, "/inApps/v1/messaging/message/list") { simulator, bundleId, _, _ throws(SimulatorError) in
            json(await simulator.messageList(bundleId: bundleId))
        }
        route(.put, "/inApps/v1/messaging/default/{productId}/{locale}") {
            simulator, bundleId, request, context throws(SimulatorError) in
            let body = try? AppStoreJSON.decode(DefaultConfigurationRequest.self, from: request.body)
            try await simulator.configureDefaultMessage(
                bundleId: bundleId, productId: try parameter(context, "productId"),
                locale: try parameter(context, "locale"), message: body?.messageIdentifier)
            return HTTPResponse(status: 200)
        }
        route(.get, "/inApps/v1/messaging/default/{productId}/{locale}") {
            simulator, bundleId, _, context throws(SimulatorError) in
            json(
                try await simulator.defaultMessage(
                    bundleId: bundleId, productId: try parameter(context, "productId"),
                    locale: try parameter(context, "locale")))
        }
        route(.delete, "/inApps/v1/messaging/default/{productId}/{locale}") {
            simulator, bundleId, _, context throws(SimulatorError) in
            try await simulator.deleteDefaultMessage(
                bundleId: bundleId, productId: try parameter(context, "productId"),
                locale: try parameter(context, "locale"))
            return HTTPResponse(status: 200)
        }
        route(.put, "/inApps/v1/messaging/realtime/url") { simulator, bundleId, request, _ throws(SimulatorError) in
            guard let body = try? AppStoreJSON.decode(RealtimeUrlRequest.self, from: request.body),
                let url = body.realtimeURL, url.hasPrefix("https://") || url.hasPrefix("http://")
            else { throw .api(code: APIError.badRequestRealtimeUrl.rawValue, "Invalid realtime URL.") }
            await simulator.setRealtimeURL(bundleId: bundleId, url: url)
            return HTTPResponse(status: 200)
        }
        route(.get, "/inApps/v1/messaging/realtime/url") { simulator, bundleId, _, _ throws(SimulatorError) in
            guard let url = await simulator.realtimeURL(bundleId: bundleId) else {
                throw .api(code: 4_040_021, "Realtime URL not found.")
            }
            return json(RealtimeUrlResponse(realtimeURL: url))
        }
        route(.delete, "/inApps/v1/messaging/realtime/url") { simulator, bundleId, _, _ throws(SimulatorError) in
            guard await simulator.realtimeURL(bundleId: bundleId) != nil else {
                throw .api(code: 4_040_021, "Realtime URL not found.")
            }
            await simulator.setRealtimeURL(bundleId: bundleId, url: nil)
            return HTTPResponse(status: 200)
        }
        route(.post, "/inApps/v1/messaging/performanceTest") { simulator, bundleId, request, _ throws(SimulatorError) in
            let body = try? AppStoreJSON.decode(PerformanceTestRequest.self, from: request.body)
            return json(
                try await simulator.initiatePerformanceTest(
                    bundleId: bundleId, transactionId: body?.originalTransactionId))
        }
        route(.get, "/inApps/v1/messaging/performanceTest/result/{requestId}") {
            simulator, _, _, context throws(SimulatorError) in
            guard let result = await simulator.performanceTestResult(id: try parameter(context, "requestId")) else {
                throw .api(code: 4_040_018, "Performance test run not found.")
            }
            return json(result)
        }
    }

    // MARK: Helpers

    static func json<T: Encodable>(_ value: T, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse.json(data: AppStoreJSON.encode(value), status: status)
    }

    static func parameter(_ context: RequestContext, _ name: String) throws(SimulatorError) -> String {
        guard let value = context.parameters[name] else { throw .api(.generalBadRequest, "Missing \(name).") }
        return value
    }

    static func uuid(_ context: RequestContext, _ name: String) throws(SimulatorError) -> UUID {
        guard let value = UUID(uuidString: try parameter(context, name)) else {
            throw .api(.generalBadRequest, "Invalid \(name).")
        }
        return value
    }

    static func historyQuery(_ request: HTTPRequest) throws(SimulatorError) -> HistoryQuery {
        var query = HistoryQuery()
        query.revision = request.queryValue("revision")
        if let start = request.queryValue("startDate") {
            guard let milliseconds = Int64(start) else { throw .api(.invalidStartDate, "Invalid start date.") }
            query.startDate = Timestamp(millisecondsSince1970: milliseconds)
        }
        if let end = request.queryValue("endDate") {
            guard let milliseconds = Int64(end) else { throw .api(.invalidEndDate, "Invalid end date.") }
            query.endDate = Timestamp(millisecondsSince1970: milliseconds)
        }
        query.productIds = request.queryValues("productId")
        query.productTypes = request.queryValues("productType")
        let known = Set(SimulatedProduct.Kind.allCases.map(\.historyFilter))
        guard query.productTypes.allSatisfy(known.contains) else {
            throw .api(.invalidProductType, "Invalid product type.")
        }
        switch request.queryValue("sort") {
        case nil, "ASCENDING": query.descending = false
        case "DESCENDING": query.descending = true
        default: throw .api(.invalidSort, "Invalid sort.")
        }
        query.groupIds = request.queryValues("subscriptionGroupIdentifier")
        if let ownership = request.queryValue("inAppOwnershipType") {
            guard let value = InAppOwnershipType(rawValue: ownership), value != .assigned else {
                throw .api(.invalidInAppOwnershipType, "Invalid in-app ownership type.")
            }
            query.ownership = value
        }
        // Apple's Python library sends Python's `str(True)`; both spellings are accepted.
        if let revoked = request.queryValue("revoked") {
            switch revoked.lowercased() {
            case "true": query.revoked = true
            case "false": query.revoked = false
            default: throw .api(.invalidRevoked, "Invalid revoked.")
            }
        }
        return query
    }

    /// The response for a refusal: Apple's JSON error payload, or Apple's bare 401.
    static func errorResponse(_ error: SimulatorError) -> HTTPResponse {
        if error.code == .unauthenticated {
            return HTTPResponse(
                status: 401, headers: ["Content-Type": "text/plain"], body: Data("Unauthenticated\n".utf8))
        }
        let code = error.apiErrorCode ?? APIError.generalBadRequest.rawValue
        var response = json(
            ErrorPayload(errorCode: RawEnum(rawValue: code), errorMessage: error.message),
            status: HTTPStatus(error.httpStatus))
        if let seconds = error.retryAfterSeconds { response.headers["Retry-After"] = String(seconds) }
        return response
    }
}
