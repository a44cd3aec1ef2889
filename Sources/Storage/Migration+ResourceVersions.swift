extension Migration {
    /// `version` on the admin resources an operator changes (apps, product catalogs, webhook
    /// endpoints): 1 when a row is created, one more on every change, so that a client can send
    /// back the version it read (`If-Match`) and be refused when another write came in between.
    /// Rows written before this migration start at 1. API keys need none: a key never changes
    /// after its creation except for its revocation, which is a single conditional `UPDATE`.
    static let resourceVersions = Migration(
        identifier: "0007_resource_versions",
        sqlite: """
            ALTER TABLE apps ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
            ALTER TABLE product_catalogs ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
            ALTER TABLE webhook_endpoints ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
            """,
        postgres: """
            ALTER TABLE apps ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
            ALTER TABLE product_catalogs ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
            ALTER TABLE webhook_endpoints ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
            """)
}
