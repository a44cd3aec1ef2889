import AppStoreModels
import Entitlements

/// Apps, catalogs, API keys, webhook endpoints.
extension SQLStoreTransaction {
    func app(id: String) throws -> AppRecord? {
        try row(
            """
            SELECT id, bundle_id, app_apple_id, environments, shared_secret, settings_json
            FROM apps WHERE id = $1
            """, .text(id)
        ).map(Self.app)
    }

    func apps() throws -> [AppRecord] {
        try rows(
            """
            SELECT id, bundle_id, app_apple_id, environments, shared_secret, settings_json
            FROM apps ORDER BY id
            """
        ).map(Self.app)
    }

    static func app(_ row: SQLRow) throws(StoreError) -> AppRecord {
        AppRecord(
            id: try row.text(0), bundleId: try row.text(1), appAppleId: try row.optionalInteger(2),
            environments: try row.text(3).split(separator: ",").compactMap {
                AppStoreEnvironment(rawValue: String($0))
            },
            sharedSecret: try row.optionalText(4),
            settings: try decode(JSONValue.self, try row.text(5), column: "apps.settings_json"))
    }

    func saveApp(_ app: AppRecord, at: Timestamp) throws {
        try execute(
            """
            INSERT INTO apps (id, bundle_id, app_apple_id, environments, shared_secret, settings_json,
                              created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
            ON CONFLICT (id) DO UPDATE SET
                bundle_id = excluded.bundle_id, app_apple_id = excluded.app_apple_id,
                environments = excluded.environments, shared_secret = excluded.shared_secret,
                settings_json = excluded.settings_json, updated_at = excluded.updated_at
            """,
            .text(app.id), .text(app.bundleId), SQLValue(app.appAppleId),
            .text(app.environments.map(\.rawValue).joined(separator: ",")), SQLValue(app.sharedSecret),
            Self.json(app.settings), SQLValue(at))
    }

    func catalog(appId: String) throws -> ProductCatalog? {
        try row("SELECT catalog_json FROM product_catalogs WHERE app_id = $1", .text(appId)).map {
            row throws(StoreError) in
            try Self.decode(ProductCatalog.self, try row.text(0), column: "product_catalogs.catalog_json")
        }
    }

    func saveCatalog(appId: String, _ catalog: ProductCatalog, at: Timestamp) throws {
        try execute(
            """
            INSERT INTO product_catalogs (app_id, catalog_json, updated_at) VALUES ($1, $2, $3)
            ON CONFLICT (app_id) DO UPDATE SET catalog_json = excluded.catalog_json, updated_at = excluded.updated_at
            """, .text(appId), Self.json(catalog), SQLValue(at))
    }

    func apiKey(hash: String) throws -> APIKeyRecord? {
        try row(
            """
            SELECT id, app_id, kind, key_hash, label, created_at, revoked_at
            FROM api_keys WHERE key_hash = $1
            """, .text(hash)
        ).map { row throws(StoreError) in
            guard let kind = APIKeyRecord.Kind(rawValue: try row.text(2)) else {
                throw StoreError(.corruptValue, "api_keys.kind is not a known kind")
            }
            return APIKeyRecord(
                id: try row.text(0), appId: try row.optionalText(1), kind: kind, hash: try row.text(3),
                label: try row.text(4), createdAt: try row.timestamp(5), revokedAt: try row.optionalTimestamp(6))
        }
    }

    func saveAPIKey(_ key: APIKeyRecord) throws {
        try execute(
            """
            INSERT INTO api_keys (id, app_id, kind, key_hash, label, created_at, revoked_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """,
            .text(key.id), SQLValue(key.appId), .text(key.kind.rawValue), .text(key.hash), .text(key.label),
            SQLValue(key.createdAt), SQLValue(key.revokedAt))
    }

    func revokeAPIKey(id: String, at: Timestamp) throws -> Bool {
        try execute(
            "UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL", .text(id), SQLValue(at)) == 1
    }

    func webhookEndpoints(appId: String) throws -> [WebhookEndpoint] {
        try rows(
            "SELECT id, app_id, url, secret, enabled FROM webhook_endpoints WHERE app_id = $1 ORDER BY id",
            .text(appId)
        ).map { row throws(StoreError) in try Self.endpoint(row) }
    }

    static func endpoint(_ row: SQLRow, from column: Int = 0) throws(StoreError) -> WebhookEndpoint {
        WebhookEndpoint(
            id: try row.text(column), appId: try row.text(column + 1), url: try row.text(column + 2),
            secret: try row.text(column + 3), isEnabled: try row.bool(column + 4))
    }

    func saveWebhookEndpoint(_ endpoint: WebhookEndpoint, at: Timestamp) throws {
        try execute(
            """
            INSERT INTO webhook_endpoints (id, app_id, url, secret, enabled, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $6)
            ON CONFLICT (id) DO UPDATE SET
                url = excluded.url, secret = excluded.secret, enabled = excluded.enabled,
                updated_at = excluded.updated_at
            """,
            .text(endpoint.id), .text(endpoint.appId), .text(endpoint.url), .text(endpoint.secret),
            SQLValue(endpoint.isEnabled), SQLValue(at))
    }
}
