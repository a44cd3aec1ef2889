import AppStoreModels
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion

/// The app's webhook endpoints (URL and signing secret, shown once; removal with their
/// deliveries; a signed test event sent now, answering what the endpoint replied) and its
/// failed deliveries (listed, replayed).
/// An endpoint's URL must pass the destination policy (`WebhookDestinationGuard`): refused
/// with 400 `destination_refused`, naming the rule.
///
/// An endpoint carries a version (`version` and the `ETag`). Its id is the server's (random),
/// and creation never replaces an endpoint (409 `endpoint_exists` if the id were taken). `PUT`
/// is a merge (the fields sent replace the stored ones) applied under the endpoint's row lock,
/// so concurrent changes of different fields all survive; with `If-Match` only to the version
/// named (412 `version_mismatch` otherwise).
/// - Note: Immutable and `Sendable`.
struct WebhooksController: Sendable {
    let apps: AppDirectory
    let clock: ServerClock
    let destinations: WebhookDestinationGuard
    /// Sends test events the way deliveries are sent.
    let deliverer: WebhookDeliverer

    struct EndpointInput: Decodable {
        var url: String?
        var secret: String?
        var enabled: Bool?
    }

    struct EndpointView: Encodable {
        var id: String
        var url: String
        var enabled: Bool
        /// Only in the answer to creation (or a secret change).
        var secret: String?
        /// The stored row's version; the `ETag` is this number in quotes.
        var version: Int64

        /// The view as JSON with the version as the ETag.
        func response(status: HTTPStatus = .ok) -> HTTPResponse {
            var response = JSONResponse.make(self, status: status)
            response.headers["ETag"] = VersionPrecondition.etag(version)
            return response
        }
    }

    struct EndpointList: Encodable {
        var endpoints: [EndpointView]
    }

    struct FailedDelivery: Encodable {
        var deliveryId: Int64
        var endpointId: String
        var eventSequence: Int64
        var attempts: Int
        var lastError: String?
        var deadLetteredAt: Timestamp?
        var deliveredAt: Timestamp?
    }

    struct FailedDeliveryList: Encodable {
        var deliveries: [FailedDelivery]
    }

    var routes: [APIRoute] {
        let errors: [Int: String?] = [400: "Error", 401: "Error", 403: "Error", 404: "Error", 503: "Error"]
        return [
            APIRoute(
                .get, "/v1/apps/{appId}/webhooks", access: .appSecret, operationId: "listWebhookEndpoints",
                summary: "Webhook endpoints (without secrets).", tag: "webhooks",
                responses: errors.merging([200: "WebhookEndpointList"]) { $1 }, handler: list),
            APIRoute(
                .post, "/v1/apps/{appId}/webhooks", access: .appSecret, operationId: "createWebhookEndpoint",
                summary: "Add a webhook endpoint; its signing secret is returned once.", tag: "webhooks",
                request: "WebhookEndpointInput",
                responses: errors.merging([201: "WebhookEndpoint", 409: "Error", 415: "Error"]) { $1 },
                handler: create
            ).versioned(ifMatch: false, etagStatuses: [201]),
            APIRoute(
                .put, "/v1/apps/{appId}/webhooks/{endpointId}", access: .appSecret,
                operationId: "updateWebhookEndpoint",
                summary: "Change an endpoint's URL, secret or enabled flag (omitted fields keep their value); with "
                    + "If-Match only if the version is still that one (412 version_mismatch).",
                tag: "webhooks", request: "WebhookEndpointInput",
                responses: errors.merging([200: "WebhookEndpoint", 409: "Error", 412: "Error", 415: "Error"]) { $1 },
                handler: update
            ).versioned(ifMatch: true, etagStatuses: [200, 412]),
            APIRoute(
                .delete, "/v1/apps/{appId}/webhooks/{endpointId}", access: .appSecret,
                operationId: "deleteWebhookEndpoint",
                summary: "Remove an endpoint, with its queued, failed and delivered deliveries.", tag: "webhooks",
                responses: errors.merging([204: nil]) { $1 }, handler: delete),
            APIRoute(
                .post, "/v1/apps/{appId}/webhooks/{endpointId}/test", access: .appSecret,
                operationId: "testWebhookEndpoint",
                summary: "Send a signed TEST event to the endpoint now, as deliveries are sent (not stored, not "
                    + "retried), and answer what the endpoint replied.",
                tag: "webhooks", responses: errors.merging([200: "WebhookTestResult"]) { $1 },
                handler: test),
            APIRoute(
                .get, "/v1/apps/{appId}/webhooks/deliveries/failed", access: .appSecret,
                operationId: "listFailedWebhookDeliveries", summary: "Dead-lettered and failing webhook deliveries.",
                tag: "webhooks", responses: errors.merging([200: "FailedDeliveryList"]) { $1 },
                query: ["cursor", "limit"],
                handler: listFailed),
            APIRoute(
                .post, "/v1/apps/{appId}/webhooks/deliveries/{deliveryId}/replay", access: .appSecret,
                operationId: "replayWebhookDelivery", summary: "Deliver a dead-lettered delivery again.",
                tag: "webhooks", responses: errors.merging([202: "ReplayAccepted", 404: "Error"]) { $1 },
                handler: replay),
        ]
    }

    @Sendable func list(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let app = try await apps.app(context)
        let appId = app.id
        let endpoints = try await apps.read { reader in try reader.webhookEndpoints(appId: appId) }
        return JSONResponse.make(
            EndpointList(
                endpoints: endpoints.map {
                    EndpointView(id: $0.id, url: $0.url, enabled: $0.isEnabled, version: $0.version)
                }))
    }

    @Sendable func create(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let input = try RequestBody.decode(EndpointInput.self, from: request)
        guard let url = input.url else {
            throw HTTPError.badRequest("url must be an absolute http or https URL.", code: "invalid_body")
        }
        try await checkDestination(url)
        let secret =
            try input.secret.map(Self.checkedSecret)
            ?? APIKeys.generate(kind: .secret).replacingOccurrences(
                of: "sk_sec_", with: "whsec_")
        let app = try await apps.app(context)
        let endpoint = WebhookEndpoint(
            id: APIKeys.identifier(prefix: "we_"), appId: app.id, url: url, secret: secret,
            isEnabled: input.enabled ?? true)
        let stored = try apps.sealed(endpoint)
        let now = clock.now()
        let actor = context[PrincipalKey.self]?.actor ?? "api"
        let created = try await apps.write("admin") { transaction -> Bool in
            guard try transaction.insertWebhookEndpoint(stored, at: now) else { return false }
            try transaction.appendAudit(
                NewAuditEntry(
                    at: now, actor: actor, action: "webhook.create", appId: endpoint.appId,
                    detail: .object(["endpointId": .string(endpoint.id)])))
            return true
        }
        guard created else {
            throw HTTPError(
                status: .conflict, code: "endpoint_exists", message: "A webhook endpoint with that id exists.")
        }
        return EndpointView(id: endpoint.id, url: endpoint.url, enabled: endpoint.isEnabled, secret: secret, version: 1)
            .response(status: .created)
    }

    @Sendable func update(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let input = try RequestBody.decode(EndpointInput.self, from: request)
        let precondition = try VersionPrecondition(request)
        if let url = input.url { try await checkDestination(url) }
        let newSecret = try input.secret.map(Self.checkedSecret)
        let app = try await apps.app(context)
        let endpointId = try context.parameter("endpointId")
        let now = clock.now()
        let appId = app.id
        let actor = context[PrincipalKey.self]?.actor ?? "api"
        let updated = try await apps.write("admin") { transaction -> WebhookEndpoint? in
            guard var endpoint = try transaction.lockWebhookEndpoint(id: endpointId, appId: appId) else { return nil }
            try precondition.check(current: endpoint.version, resource: "webhook endpoint")
            if let url = input.url { endpoint.url = url }
            if let enabled = input.enabled { endpoint.isEnabled = enabled }
            if let newSecret { endpoint.secret = newSecret }
            endpoint.version = try transaction.saveWebhookEndpoint(try apps.sealed(endpoint), at: now)
            try transaction.appendAudit(
                NewAuditEntry(
                    at: now, actor: actor, action: "webhook.update", appId: appId,
                    detail: .object(["endpointId": .string(endpointId)])))
            return endpoint
        }
        guard let updated else {
            throw HTTPError(status: .notFound, code: "endpoint_not_found", message: "No such webhook endpoint.")
        }
        return EndpointView(
            id: updated.id, url: updated.url, enabled: updated.isEnabled, secret: newSecret, version: updated.version
        ).response()
    }

    /// Removes the endpoint in one transaction with its outbox rows and leases: a worker
    /// sending one of them at that moment finds its lease gone and records nothing.
    @Sendable func delete(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let app = try await apps.app(context)
        let endpointId = try context.parameter("endpointId")
        let now = clock.now()
        let appId = app.id
        let actor = context[PrincipalKey.self]?.actor ?? "api"
        let deleted = try await apps.write("admin") { transaction -> Bool in
            guard try transaction.deleteWebhookEndpoint(id: endpointId, appId: appId) else { return false }
            try transaction.appendAudit(
                NewAuditEntry(
                    at: now, actor: actor, action: "webhook.delete", appId: appId,
                    detail: .object(["endpointId": .string(endpointId)])))
            return true
        }
        guard deleted else {
            throw HTTPError(status: .notFound, code: "endpoint_not_found", message: "No such webhook endpoint.")
        }
        return HTTPResponse(status: .noContent)
    }

    /// Sends a test event and answers what the endpoint replied: 200 whatever it replied (the
    /// result says), 404 for an unknown endpoint. A disabled endpoint is tested too (nothing is
    /// queued for it): so it can be checked before it is enabled.
    @Sendable func test(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let app = try await apps.app(context)
        let endpointId = try context.parameter("endpointId")
        let appId = app.id
        let endpoint = try await apps.read { reader in
            try reader.webhookEndpoints(appId: appId).first { $0.id == endpointId }
        }
        guard let endpoint else {
            throw HTTPError(status: .notFound, code: "endpoint_not_found", message: "No such webhook endpoint.")
        }
        return JSONResponse.make(await deliverer.sendTest(to: endpoint))
    }

    /// Deliveries of this app's endpoints that are dead-lettered or failing, oldest first,
    /// paged by `cursor` (the last delivery id seen).
    @Sendable func listFailed(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let app = try await apps.app(context)
        let limit = try RequestBody.limit(request)
        let after = try request.queryValue("cursor").map { text -> Int64 in
            guard let value = Int64(text), value >= 0 else {
                throw HTTPError.badRequest("cursor must be a delivery id.", code: "invalid_query")
            }
            return value
        }
        let appId = app.id
        let deliveries = try await apps.read { reader in
            try reader.failedDeliveries(appId: appId, after: after, limit: limit).map { outbox in
                FailedDelivery(
                    deliveryId: outbox.id, endpointId: outbox.endpointId, eventSequence: outbox.eventSequence,
                    attempts: outbox.attempts, lastError: outbox.lastError.map(WebhookDeliveryFailure.listedCategory),
                    deadLetteredAt: outbox.deadLetteredAt,
                    deliveredAt: outbox.deliveredAt)
            }
        }
        return JSONResponse.make(FailedDeliveryList(deliveries: deliveries))
    }

    /// Puts a dead-lettered delivery back in the queue; the deliverer sends it again from
    /// attempt 1, still after the customer's earlier events.
    @Sendable func replay(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let app = try await apps.app(context)
        guard let deliveryId = Int64(try context.parameter("deliveryId")) else {
            throw HTTPError.badRequest("deliveryId must be an integer.", code: "invalid_path_parameter")
        }
        let now = clock.now()
        let appId = app.id
        let actor = context[PrincipalKey.self]?.actor ?? "api"
        let replayed = try await apps.write("admin") { transaction -> Bool in
            guard try transaction.replayDelivery(id: deliveryId, appId: appId, at: now) else { return false }
            try transaction.appendAudit(
                NewAuditEntry(
                    at: now, actor: actor, action: "webhook.replay", appId: appId,
                    detail: .object(["deliveryId": .integer(deliveryId)])))
            return true
        }
        guard replayed else {
            throw HTTPError(
                status: .notFound, code: "delivery_not_found", message: "No dead-lettered delivery with this id.")
        }
        return JSONResponse.make(ReplayAccepted(deliveryId: deliveryId), status: .accepted)
    }

    struct ReplayAccepted: Encodable {
        var deliveryId: Int64
    }

    /// 400 `invalid_body` for what is not an http(s) URL, 400 `destination_refused` (with the
    /// rule) for what the destination policy refuses.
    func checkDestination(_ url: String) async throws {
        do throws(WebhookDestinationRefusal) {
            _ = try await destinations.checkRegistration(url)
        } catch {
            if error.rule == "destination.invalidURL" {
                throw HTTPError.badRequest("url refused (\(error.rule)): \(error.reason).", code: "invalid_body")
            }
            // Credentials stay refused whatever the allow-list says; addresses may be allowed.
            let hint =
                error.rule == "destination.credentials"
                ? ""
                : " Loopback, link-local, private and other special-purpose destinations need the server's "
                    + "webhookAllowedDestinations."
            throw HTTPError.badRequest(
                "url refused (\(error.rule)): \(error.reason).\(hint)", code: "destination_refused")
        }
    }

    static func checkedSecret(_ secret: String) throws -> String {
        guard (16...256).contains(secret.utf8.count) else {
            throw HTTPError.badRequest("secret must be 16 to 256 characters.", code: "invalid_body")
        }
        return secret
    }
}
