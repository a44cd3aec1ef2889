import AppStoreModels
import Entitlements
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion

/// Reading a customer: `CustomerInfo` (with ETag / If-None-Match), its lifecycle events and
/// its stored facts (paged by cursor), and aliases that merge two app user ids.
/// - Note: Immutable and `Sendable`.
struct CustomersController: Sendable {
    let apps: AppDirectory
    let aliases: CustomerAliases
    let clock: ServerClock

    var routes: [APIRoute] {
        let errors: [Int: String?] = [400: "Error", 401: "Error", 403: "Error", 404: "Error", 503: "Error"]
        return [
            APIRoute(
                .get, "/v1/apps/{appId}/customers/{appUserId}", access: .appPublic, operationId: "getCustomer",
                summary: "The customer's CustomerInfo; ETag and If-None-Match (304).", tag: "customers",
                responses: errors.merging([200: "CustomerInfo", 304: nil]) { $1 }, query: ["environment"],
                immediate: getCustomer),
            APIRoute(
                .get, "/v1/apps/{appId}/customers/{appUserId}/events", access: .appSecret,
                operationId: "listCustomerEvents", summary: "Lifecycle events, oldest first, paged by cursor.",
                tag: "customers", responses: errors.merging([200: "EventPage"]) { $1 }, query: ["cursor", "limit"],
                handler: listEvents),
            APIRoute(
                .get, "/v1/apps/{appId}/customers/{appUserId}/transactions", access: .appSecret,
                operationId: "listCustomerTransactions",
                summary: "Stored facts with their raw JWS, oldest first, paged by cursor.", tag: "customers",
                responses: errors.merging([200: "FactPage"]) { $1 }, query: ["kind", "cursor", "limit"],
                handler: listFacts),
            APIRoute(
                .post, "/v1/apps/{appId}/customers/{appUserId}/aliases", access: .appSecret,
                operationId: "addCustomerAlias",
                summary: "Merge another app user id into this customer and keep it as an alias.", tag: "customers",
                request: "AddAlias",
                responses: errors.merging([200: "CustomerInfo", 409: "Error", 415: "Error"]) { $1 },
                handler: addAlias),
        ]
    }

    // MARK: Handlers

    /// Answered on the HTTP thread: a cached app, one indexed read, the committed bytes.
    @Sendable func getCustomer(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let app = try apps.appBlocking(context)
        let appUserId = try Self.appUserId(context)
        let environment = try Self.environment(request.queryValue("environment")) ?? Self.defaultEnvironment(app)
        let now = clock.now()
        let appId = app.id
        // The committed JSON is the answer until its next scheduled change: no decoding, no
        // engine, no encoding. Only a state that time has overtaken is evaluated afresh.
        let (body, digest) = try apps.readBlocking { reader -> (Data, String?) in
            let lookup = try reader.customerState(appId: appId, knownAs: appUserId, environment: environment)
            if case .state(_, let json, let validUntil, let digest) = lookup,
                now.millisecondsSince1970 < validUntil
            {
                return (Data(json.utf8), digest)
            }
            if case .noCustomer = lookup {
                return (
                    AppStoreJSON.encode(
                        CustomerInfo(customerId: appUserId, environment: environment, evaluatedAt: now)),
                    nil
                )
            }
            let customer = try reader.customer(appId: appId, knownAs: appUserId)
            return (
                AppStoreJSON.encode(
                    try CustomerStateUpdater.current(
                        customer: customer, appUserId: appUserId, environment: environment, in: reader, now: now)),
                nil
            )
        }
        return Self.respond(body: body, digest: digest, request: request)
    }

    struct EventView: Encodable {
        var sequence: Int64
        var createdAt: Timestamp
        var event: LifecycleEvent
    }

    struct EventPage: Encodable {
        var events: [EventView]
        var nextCursor: String?
    }

    @Sendable func listEvents(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let app = try await apps.app(context)
        let appUserId = try Self.appUserId(context)
        let cursor = try RequestBody.cursor(request)
        let limit = try RequestBody.limit(request)
        let appId = app.id
        let events = try await apps.read { reader -> [StoredEvent]? in
            guard let customer = try reader.customer(appId: appId, knownAs: appUserId) else { return nil }
            return try reader.events(customerId: customer.id, after: cursor, limit: limit)
        }
        guard let events else { throw Self.customerNotFound }
        return JSONResponse.make(
            EventPage(
                events: events.map { EventView(sequence: $0.sequence, createdAt: $0.createdAt, event: $0.event) },
                nextCursor: events.count == limit ? events.last.map { String($0.sequence) } : nil))
    }

    struct FactView: Encodable {
        var sequence: Int64
        var kind: String
        var environment: AppStoreEnvironment?
        var originalTransactionId: String?
        var signedDate: Timestamp
        var raw: String?
        var fact: Fact?
        var receivedAt: Timestamp

        enum CodingKeys: String, CodingKey {
            case sequence, kind, environment, originalTransactionId, signedDate, raw, fact, receivedAt
        }

        /// `kind` already names the fact's type, so `fact` is the decoded fact itself rather
        /// than the engine's enum wrapping (`{"transaction":{"_0":…}}`).
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(sequence, forKey: .sequence)
            try container.encode(kind, forKey: .kind)
            try container.encodeIfPresent(environment, forKey: .environment)
            try container.encodeIfPresent(originalTransactionId, forKey: .originalTransactionId)
            try container.encode(signedDate, forKey: .signedDate)
            try container.encodeIfPresent(raw, forKey: .raw)
            switch fact {
            case .transaction(let value)?: try container.encode(value, forKey: .fact)
            case .renewalInfo(let value)?: try container.encode(value, forKey: .fact)
            case .notification(let value)?: try container.encode(value, forKey: .fact)
            case .playSubscription(let value)?: try container.encode(value, forKey: .fact)
            case .playProductPurchase(let value)?: try container.encode(value, forKey: .fact)
            case .playVoidedPurchase(let value)?: try container.encode(value, forKey: .fact)
            case .playOrder(let value)?: try container.encode(value, forKey: .fact)
            case nil: break
            }
            try container.encode(receivedAt, forKey: .receivedAt)
        }
    }

    struct FactPage: Encodable {
        var items: [FactView]
        var nextCursor: String?
    }

    @Sendable func listFacts(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let app = try await apps.app(context)
        let appUserId = try Self.appUserId(context)
        let cursor = try RequestBody.cursor(request)
        let limit = try RequestBody.limit(request)
        let kindName = request.queryValue("kind") ?? FactKind.transaction.rawValue
        guard let kind = FactKind(rawValue: kindName) else {
            throw HTTPError.badRequest("kind must be transaction, renewalInfo or notification.", code: "invalid_query")
        }
        let appId = app.id
        let facts = try await apps.read { reader -> [StoredFact]? in
            guard let customer = try reader.customer(appId: appId, knownAs: appUserId) else { return nil }
            return try reader.storedFacts(customerId: customer.id, kind: kind, after: cursor, limit: limit)
        }
        guard let facts else { throw Self.customerNotFound }
        return JSONResponse.make(
            FactPage(
                items: facts.map {
                    FactView(
                        sequence: $0.sequence, kind: $0.kind.rawValue, environment: $0.environment,
                        originalTransactionId: $0.originalTransactionId, signedDate: $0.signedDate, raw: $0.raw,
                        fact: $0.fact, receivedAt: $0.receivedAt)
                },
                nextCursor: facts.count == limit ? facts.last.map { String($0.sequence) } : nil))
    }

    struct AddAliasBody: Decodable {
        var alias: String
    }

    @Sendable func addAlias(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let body = try RequestBody.decode(AddAliasBody.self, from: request)
        let app = try await apps.app(context)
        let appUserId = try Self.appUserId(context)
        guard Self.isValidUserId(body.alias) else {
            throw HTTPError.badRequest("alias must be 1 to 256 printable characters.", code: "invalid_body")
        }
        let info: CustomerInfo
        do {
            info = try await aliases.merge(app: app, appUserId: appUserId, alias: body.alias)
        } catch {
            throw ErrorMapping.ingestionFailure(error)
        }
        return Self.respond(info, request: request)
    }

    // MARK: Shared

    static let customerNotFound = HTTPError(status: .notFound, code: "customer_not_found", message: "No such customer.")

    /// The `{appUserId}` path parameter, checked.
    static func appUserId(_ context: RequestContext) throws -> String {
        let value = try context.parameter("appUserId")
        guard isValidUserId(value) else {
            throw HTTPError.badRequest(
                "appUserId must be 1 to 256 printable characters.", code: "invalid_path_parameter")
        }
        return value
    }

    static func isValidUserId(_ value: String) -> Bool { CustomerIdentity.isValidAppUserId(value) }

    static func environment(_ raw: String?) throws -> AppStoreEnvironment? {
        guard let raw, !raw.isEmpty else { return nil }
        guard let environment = AppStoreEnvironment(rawValue: raw) else {
            throw HTTPError.badRequest(
                "environment must be Production, Sandbox, Xcode or LocalTesting.", code: "invalid_environment")
        }
        return environment
    }

    static func defaultEnvironment(_ app: AppRuntime) throws -> AppStoreEnvironment {
        do {
            return try app.environment(nil)
        } catch {
            throw ErrorMapping.ingestionFailure(error)
        }
    }

    /// The strong ETag of a CustomerInfo's canonical JSON.
    static func etag(of body: Data) -> String {
        etag(digest: CustomerInfoDigest.of(body))
    }

    static func etag(digest: String) -> String { "\"" + digest + "\"" }

    /// CustomerInfo as JSON with a strong ETag over the body; 304 when `If-None-Match` matches.
    static func respond(_ info: CustomerInfo, request: HTTPRequest) -> HTTPResponse {
        respond(body: AppStoreJSON.encode(info), request: request)
    }

    /// `body` (CustomerInfo's canonical JSON) with its ETag, from `digest` when the store kept
    /// it (`CustomerInfoDigest` of this very body); 304 when `If-None-Match` matches.
    static func respond(body: Data, digest: String? = nil, request: HTTPRequest) -> HTTPResponse {
        let etag = digest.map { Self.etag(digest: $0) } ?? etag(of: body)
        if let match = request.headers["If-None-Match"], request.method == .get || request.method == .head {
            let candidates = match.split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "")
            }
            if candidates.contains(etag) || candidates.contains("*") {
                return HTTPResponse(status: 304, headers: ["ETag": etag, "Cache-Control": "private, no-cache"])
            }
        }
        var response = HTTPResponse.json(data: body)
        response.headers["ETag"] = etag
        response.headers["Cache-Control"] = "private, no-cache"
        return response
    }
}
