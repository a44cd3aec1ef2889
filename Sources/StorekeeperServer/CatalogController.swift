import Entitlements
import HTTPServer
import Storage
import StorekeeperIngestion

/// The app's product catalog and entitlement mapping (which products unlock which
/// entitlements). Changing it changes how every customer is evaluated from then on.
/// - Note: Immutable and `Sendable`.
struct CatalogController: Sendable {
    let apps: AppDirectory
    let clock: ServerClock

    struct CatalogBody: Codable {
        var products: [CatalogProduct]
        var isSmallBusinessProgram: Bool?
    }

    var routes: [APIRoute] {
        let errors: [Int: String?] = [400: "Error", 401: "Error", 403: "Error", 404: "Error", 503: "Error"]
        return [
            APIRoute(
                .get, "/v1/apps/{appId}/catalog", access: .appSecret, operationId: "getCatalog",
                summary: "The product catalog and entitlement mapping.", tag: "admin",
                responses: errors.merging([200: "Catalog"]) { $1 }, handler: get),
            APIRoute(
                .put, "/v1/apps/{appId}/catalog", access: .appSecret, operationId: "putCatalog",
                summary: "Replace the product catalog and entitlement mapping.", tag: "admin", request: "Catalog",
                responses: errors.merging([200: "Catalog", 415: "Error"]) { $1 }, handler: put),
        ]
    }

    @Sendable func get(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let app = try await apps.app(context)
        let appId = app.id
        let catalog = try await apps.read { reader in try reader.catalog(appId: appId) } ?? ProductCatalog(products: [])
        return JSONResponse.make(Self.body(catalog))
    }

    @Sendable func put(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let body = try RequestBody.decode(CatalogBody.self, from: request)
        for product in body.products {
            guard !product.productId.isEmpty, product.productId.utf8.count <= 255 else {
                throw HTTPError.badRequest("Every product needs a productId.", code: "invalid_body")
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
        try await apps.write("admin") { transaction in
            try transaction.saveCatalog(appId: appId, catalog, at: now)
            try transaction.appendAudit(
                NewAuditEntry(
                    at: now, actor: actor, action: "catalog.update", appId: appId,
                    detail: .object(["products": .integer(Int64(catalog.products.count))])))
        }
        return JSONResponse.make(Self.body(catalog))
    }

    static func body(_ catalog: ProductCatalog) -> CatalogBody {
        CatalogBody(
            products: catalog.products.values.sorted { $0.productId < $1.productId },
            isSmallBusinessProgram: catalog.isSmallBusinessProgram)
    }
}
