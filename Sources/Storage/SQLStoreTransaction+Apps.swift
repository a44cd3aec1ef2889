import AppStoreModels
import Entitlements

/// Apps, catalogs, API keys, webhook endpoints.
///
/// Every save of an app, a catalog or a webhook endpoint adds one to the row's `version`
/// (migration `0007_resource_versions`), so that a client can make its write conditional on
/// the version it read. A read-modify-write of one of them holds the row with `lockApp` /
/// `lockWebhookEndpoint` first: PostgreSQL `SELECT … FOR NO KEY UPDATE` (the row lock that
/// excludes other writers of the row but not the `FOR KEY SHARE` locks that inserting a
/// customer, a fact or an outbox row takes on the row it references, so ingestion never waits
/// on an admin write); SQLite's single writer already serializes.
extension SQLStoreTransaction {
    func app(id: String) throws -> AppRecord? {
        try row(
            """
            SELECT id, bundle_id, app_apple_id, environments, shared_secret, settings_json, version
            FROM apps WHERE id = $1
            """, .text(id)
        ).map(Self.app)
    }

    func apps() throws -> [AppRecord] {
        try rows(
            """
            SELECT id, bundle_id, app_apple_id, environments, shared_secret, settings_json, version
            FROM apps ORDER BY id
            """
        ).map(Self.app)
    }

    func lockApp(id: String) throws -> AppRecord? {
        let sql: String
        switch dialect {
        case .sqlite:
            sql = """
                SELECT id, bundle_id, app_apple_id, environments, shared_secret, settings_json, version
                FROM apps WHERE id = $1
                """
        case .postgres:
            sql = """
                SELECT id, bundle_id, app_apple_id, environments, shared_secret, settings_json, version
                FROM apps WHERE id = $1 FOR NO KEY UPDATE
                """
        }
        return try connection.query(sql, [.text(id)]).first.map(Self.app)
    }

    static func app(_ row: SQLRow) throws(StoreError) -> AppRecord {
        AppRecord(
            id: try row.text(0), bundleId: try row.text(1), appAppleId: try row.optionalInteger(2),
            environments: try row.text(3).split(separator: ",").compactMap {
                AppStoreEnvironment(rawValue: String($0))
            },
            sharedSecret: try row.optionalText(4),
            settings: try decode(JSONValue.self, try row.text(5), column: "apps.settings_json"),
            version: try row.integer(6))
    }

    @discardableResult
    func saveApp(_ app: AppRecord, at: Timestamp) throws -> Int64 {
        let saved = try rows(
            """
            INSERT INTO apps (id, bundle_id, app_apple_id, environments, shared_secret, settings_json,
                              created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
            ON CONFLICT (id) DO UPDATE SET
                bundle_id = excluded.bundle_id, app_apple_id = excluded.app_apple_id,
                environments = excluded.environments, shared_secret = excluded.shared_secret,
                settings_json = excluded.settings_json, updated_at = excluded.updated_at,
                version = apps.version + 1
            RETURNING version
            """,
            .text(app.id), .text(app.bundleId), SQLValue(app.appAppleId),
            .text(app.environments.map(\.rawValue).joined(separator: ",")), SQLValue(app.sharedSecret),
            Self.json(app.settings), SQLValue(at))
        // The app's Play package is claimed in the app's environments: they may have changed
        // (claims made for the old ones went stale: a new environment's purchases were refused
        // and a dropped one stayed blocked for other apps).
        if let packageName = try playPackageName(appId: app.id) {
            try claimPlayPackage(packageName, appId: app.id, environments: app.environments)
        }
        return try Self.returnedVersion(saved, of: "apps")
    }

    func insertApp(_ app: AppRecord, at: Timestamp) throws -> Bool {
        try execute(
            """
            INSERT INTO apps (id, bundle_id, app_apple_id, environments, shared_secret, settings_json,
                              created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
            ON CONFLICT (id) DO NOTHING
            """,
            .text(app.id), .text(app.bundleId), SQLValue(app.appAppleId),
            .text(app.environments.map(\.rawValue).joined(separator: ",")), SQLValue(app.sharedSecret),
            Self.json(app.settings), SQLValue(at)) == 1
    }

    /// The `version` an `INSERT … RETURNING version` answered (an upsert always returns its row).
    static func returnedVersion(_ rows: [SQLRow], of table: String) throws(StoreError) -> Int64 {
        guard let row = rows.first else {
            throw StoreError(.corruptValue, "\(table): a save returned no version")
        }
        return try row.integer(0)
    }

    /// Decoded catalogs by app: every ingestion reads its app's catalog.
    static let catalogs = StoredTextCache<String, ProductCatalog>(byteBudget: 16 << 20, capacity: 1_024)

    func catalog(appId: String) throws -> ProductCatalog? {
        try row("SELECT catalog_json FROM product_catalogs WHERE app_id = $1", .text(appId)).map {
            row throws(StoreError) in try Self.catalog(appId: appId, text: try row.text(0))
        }
    }

    func storedCatalog(appId: String) throws -> StoredCatalog? {
        try row("SELECT catalog_json, version FROM product_catalogs WHERE app_id = $1", .text(appId)).map {
            row throws(StoreError) in
            StoredCatalog(catalog: try Self.catalog(appId: appId, text: try row.text(0)), version: try row.integer(1))
        }
    }

    private static func catalog(appId: String, text: String) throws(StoreError) -> ProductCatalog {
        try catalogs.value(appId, text: text) { text throws(StoreError) in
            try decode(ProductCatalog.self, text, column: "product_catalogs.catalog_json")
        }
    }

    @discardableResult
    func saveCatalog(appId: String, _ catalog: ProductCatalog, at: Timestamp) throws -> Int64 {
        let saved = try rows(
            """
            INSERT INTO product_catalogs (app_id, catalog_json, updated_at) VALUES ($1, $2, $3)
            ON CONFLICT (app_id) DO UPDATE SET
                catalog_json = excluded.catalog_json, updated_at = excluded.updated_at,
                version = product_catalogs.version + 1
            RETURNING version
            """, .text(appId), Self.json(catalog), SQLValue(at))
        return try Self.returnedVersion(saved, of: "product_catalogs")
    }

    func apiKey(hash: String) throws -> APIKeyRecord? {
        try row(
            """
            SELECT id, app_id, kind, key_hash, label, created_at, revoked_at
            FROM api_keys WHERE key_hash = $1
            """, .text(hash)
        ).map(Self.apiKey)
    }

    func apiKeys(appId: String?) throws -> [APIKeyRecord] {
        if let appId {
            return try rows(
                """
                SELECT id, app_id, kind, key_hash, label, created_at, revoked_at
                FROM api_keys WHERE app_id = $1 ORDER BY created_at, id
                """, .text(appId)
            ).map(Self.apiKey)
        }
        return try rows(
            """
            SELECT id, app_id, kind, key_hash, label, created_at, revoked_at
            FROM api_keys WHERE app_id IS NULL ORDER BY created_at, id
            """
        ).map(Self.apiKey)
    }

    static func apiKey(_ row: SQLRow) throws(StoreError) -> APIKeyRecord {
        guard let kind = APIKeyRecord.Kind(rawValue: try row.text(2)) else {
            throw StoreError(.corruptValue, "api_keys.kind is not a known kind")
        }
        return APIKeyRecord(
            id: try row.text(0), appId: try row.optionalText(1), kind: kind, hash: try row.text(3),
            label: try row.text(4), createdAt: try row.timestamp(5), revokedAt: try row.optionalTimestamp(6))
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
            "SELECT id, app_id, url, secret, enabled, version FROM webhook_endpoints WHERE app_id = $1 ORDER BY id",
            .text(appId)
        ).map(Self.versionedEndpoint)
    }

    func lockWebhookEndpoint(id: String, appId: String) throws -> WebhookEndpoint? {
        let sql: String
        switch dialect {
        case .sqlite:
            sql = """
                SELECT id, app_id, url, secret, enabled, version FROM webhook_endpoints
                WHERE id = $1 AND app_id = $2
                """
        case .postgres:
            sql = """
                SELECT id, app_id, url, secret, enabled, version FROM webhook_endpoints
                WHERE id = $1 AND app_id = $2 FOR NO KEY UPDATE
                """
        }
        return try connection.query(sql, [.text(id), .text(appId)]).first.map(Self.versionedEndpoint)
    }

    /// `endpoint(_:from:)` of a row that also selected `version` (column 5).
    static func versionedEndpoint(_ row: SQLRow) throws(StoreError) -> WebhookEndpoint {
        var endpoint = try endpoint(row)
        endpoint.version = try row.integer(5)
        return endpoint
    }

    static func endpoint(_ row: SQLRow, from column: Int = 0) throws(StoreError) -> WebhookEndpoint {
        WebhookEndpoint(
            id: try row.text(column), appId: try row.text(column + 1), url: try row.text(column + 2),
            secret: try row.text(column + 3), isEnabled: try row.bool(column + 4))
    }

    @discardableResult
    func saveWebhookEndpoint(_ endpoint: WebhookEndpoint, at: Timestamp) throws -> Int64 {
        let saved = try rows(
            """
            INSERT INTO webhook_endpoints (id, app_id, url, secret, enabled, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $6)
            ON CONFLICT (id) DO UPDATE SET
                url = excluded.url, secret = excluded.secret, enabled = excluded.enabled,
                updated_at = excluded.updated_at, version = webhook_endpoints.version + 1
            RETURNING version
            """,
            .text(endpoint.id), .text(endpoint.appId), .text(endpoint.url), .text(endpoint.secret),
            SQLValue(endpoint.isEnabled), SQLValue(at))
        return try Self.returnedVersion(saved, of: "webhook_endpoints")
    }

    func insertWebhookEndpoint(_ endpoint: WebhookEndpoint, at: Timestamp) throws -> Bool {
        try execute(
            """
            INSERT INTO webhook_endpoints (id, app_id, url, secret, enabled, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $6)
            ON CONFLICT (id) DO NOTHING
            """,
            .text(endpoint.id), .text(endpoint.appId), .text(endpoint.url), .text(endpoint.secret),
            SQLValue(endpoint.isEnabled), SQLValue(at)) == 1
    }

    func deleteWebhookEndpoint(id: String, appId: String) throws -> Bool {
        // The outbox and lease rows go with it (ON DELETE CASCADE, migrations 0001 and 0008).
        try execute("DELETE FROM webhook_endpoints WHERE id = $1 AND app_id = $2", .text(id), .text(appId)) == 1
    }
}
