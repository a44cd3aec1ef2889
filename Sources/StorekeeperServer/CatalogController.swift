import Entitlements
import HTTPServer
import Storage
import StorekeeperIngestion

/// The app's product catalog and entitlement mapping (which products unlock which
/// entitlements). Changing it changes how every customer is evaluated from then on.
///
/// The catalog is one document: `PUT` replaces it whole. It carries a version (`version` and
/// the `ETag`; 0 while the app has none stored). With `If-Match` a `PUT` applies only if the
/// version is still the one named (412 `version_mismatch` otherwise): the way for two editors
/// not to overwrite each other's products. Without it, the last `PUT` wins.
/// - Note: Immutable and `Sendable`.
struct CatalogController: Sendable {
    let apps: AppDirectory
    let clock: ServerClock

    struct CatalogBody: Codable {
        var products: [CatalogProduct]
        var isSmallBusinessProgram: Bool?
        /// In answers only (a `PUT` ignores it: the version to match goes in `If-Match`).
        var version: Int64?
    }

    var routes: [APIRoute] {
        let errors: [Int: String?] = [400: "Error", 401: "Error", 403: "Error", 404: "Error", 503: "Error"]
        return [
            APIRoute(
                .get, "/v1/apps/{appId}/catalog", access: .appSecret, operationId: "getCatalog",
                summary: "The product catalog and entitlement mapping.", tag: "admin",
                responses: errors.merging([200: "Catalog"]) { $1 }, handler: get
            ).versioned(ifMatch: false, etagStatuses: [200]),
            APIRoute(
                .put, "/v1/apps/{appId}/catalog", access: .appSecret, operationId: "putCatalog",
                summary: "Replace the product catalog and entitlement mapping; with If-Match only if the version is "
                    + "still that one (412 version_mismatch).", tag: "admin", request: "Catalog",
                responses: errors.merging([200: "Catalog", 412: "Error", 415: "Error"]) { $1 }, handler: put
            ).versioned(ifMatch: true, etagStatuses: [200, 412]),
        ]
    }

    @Sendable func get(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let app = try await apps.app(context)
        let appId = app.id
        let stored = try await apps.read { reader in try reader.storedCatalog(appId: appId) }
        return Self.respond(stored ?? StoredCatalog(catalog: ProductCatalog(products: []), version: 0))
    }

    @Sendable func put(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let body = try RequestBody.decode(CatalogBody.self, from: request)
        let precondition = try VersionPrecondition(request)
        for product in body.products {
            guard Self.isValidIdentifier(product.productId) else {
                throw HTTPError.badRequest(
                    "Every product needs a productId of 1 to 255 bytes without control characters.",
                    code: "invalid_body")
            }
            guard product.entitlementIds.allSatisfy(Self.isValidIdentifier) else {
                throw HTTPError.badRequest(
                    "Every entitlement id must be 1 to 255 bytes without control characters.", code: "invalid_body")
            }
            if product.kind == .consumable && !product.entitlementIds.isEmpty {
                throw HTTPError.badRequest("Consumables cannot unlock entitlements.", code: "invalid_body")
            }
        }
        guard Set(body.products.map(\.productId)).count == body.products.count else {
            throw HTTPError.badRequest("productId values must be unique.", code: "invalid_body")
        }
        let app = try await apps.app(context)
        let catalog = ProductCatalog(
            products: body.products, isSmallBusinessProgram: body.isSmallBusinessProgram ?? false)
        let now = clock.now()
        let appId = app.id
        let actor = context[PrincipalKey.self]?.actor ?? "api"
        let version = try await apps.write("admin") { transaction -> Int64 in
            // The app's row lock serializes the check and the save with every other write of
            // this app's catalog, including the first, when there is no catalog row to lock yet.
            guard try transaction.lockApp(id: appId) != nil else { throw ErrorMapping.ingestionFailure(.appNotFound) }
            let current = try transaction.storedCatalog(appId: appId)?.version ?? 0
            try precondition.check(current: current, resource: "catalog")
            let version = try transaction.saveCatalog(appId: appId, catalog, at: now)
            try transaction.appendAudit(
                NewAuditEntry(
                    at: now, actor: actor, action: "catalog.update", appId: appId,
                    detail: .object(["products": .integer(Int64(catalog.products.count))])))
            return version
        }
        return Self.respond(StoredCatalog(catalog: catalog, version: version))
    }

    /// A product or entitlement id: 1 to 255 bytes, no control character (a NUL cannot be stored
    /// in a column, and the others would reach webhooks, CSV exports and the dashboard as they are).
    static func isValidIdentifier(_ id: String) -> Bool {
        (1...255).contains(id.utf8.count) && !RequestBody.holdsControlCharacter(id)
    }

    /// The catalog as JSON (products sorted by id) with its version as the ETag.
    static func respond(_ stored: StoredCatalog) -> HTTPResponse {
        let catalog = stored.catalog
        var response = JSONResponse.make(
            CatalogBody(
                products: catalog.products.values.sorted { $0.productId < $1.productId },
                isSmallBusinessProgram: catalog.isSmallBusinessProgram, version: stored.version))
        response.headers["ETag"] = VersionPrecondition.etag(stored.version)
        return response
    }
}
