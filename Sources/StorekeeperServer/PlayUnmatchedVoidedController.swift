import AppStoreModels
import Entitlements
import HTTPServer
import Storage

/// Admin: the voided purchases (refunds, chargebacks) Storekeeper keeps for Google Play purchase
/// tokens it has not read yet (docs/googleplay.md). They refund nothing until the token arrives
/// (the app posts it, or a notification leads to its read); then the refund applies. The oldest
/// first, at most `?limit=` (clamped to 500, default 100), with the total.
/// - Note: Immutable and `Sendable`.
struct PlayUnmatchedVoidedController: Sendable {
    let apps: AppDirectory

    struct Entry: Encodable {
        var purchaseToken: String
        var orderId: String?
        /// `subscription` or `oneTime`; absent until the token is read.
        var productType: String?
        var voidedAt: Int64
        var refundType: String
        var voidedQuantity: Int?
        var voidedReason: Int?
        var source: String
        var receivedAt: Int64
    }

    struct View: Encodable {
        var count: Int
        var voided: [Entry]
    }

    static func entry(_ record: PlayUnmatchedVoided) -> Entry {
        let fact = record.fact
        var productType: String?
        switch fact.productType {
        case .subscription?: productType = "subscription"
        case .oneTime?: productType = "oneTime"
        case nil: productType = nil
        }
        return Entry(
            purchaseToken: fact.purchaseToken, orderId: fact.orderId, productType: productType,
            voidedAt: fact.voidedAt.millisecondsSince1970,
            refundType: fact.refundType == .quantityBasedPartial ? "quantityBasedPartial" : "full",
            voidedQuantity: fact.voidedQuantity, voidedReason: fact.voidedReason, source: record.source,
            receivedAt: record.receivedAt.millisecondsSince1970)
    }

    var routes: [APIRoute] {
        [
            APIRoute(
                .get, "/v1/admin/apps/{appId}/googleplay/unmatched-voided", access: .admin,
                operationId: "listPlayUnmatchedVoided",
                summary: "Voided Google Play purchases kept for purchase tokens not read yet (refunds waiting for "
                    + "their purchase), the oldest first.",
                tag: "admin",
                responses: [200: "PlayUnmatchedVoided", 400: "Error", 401: "Error", 403: "Error", 404: "Error"],
                query: ["limit"], handler: list)
        ]
    }

    @Sendable func list(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let appId = try await apps.record(context).id
        let limit = try RequestBody.limit(request)
        let (count, records) = try await apps.read { reader in
            (
                try reader.playUnmatchedVoidedCount(appId: appId),
                try reader.playUnmatchedVoided(appId: appId, limit: limit)
            )
        }
        let entries = records.map(Self.entry)
        return JSONResponse.make(View(count: count, voided: entries))
    }
}
