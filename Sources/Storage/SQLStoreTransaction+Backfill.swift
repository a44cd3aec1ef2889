import AppStoreModels

/// The receipt backfill's record of imported lines (migration 0013).
extension SQLStoreTransaction {
    func backfillLineImported(appId: String, lineDigest: String) throws -> Bool {
        try row(
            "SELECT 1 FROM backfill_lines WHERE app_id = $1 AND line_digest = $2", .text(appId), .text(lineDigest))
            != nil
    }

    func backfillLineCount(appId: String) throws -> Int {
        Int(try row("SELECT COUNT(*) FROM backfill_lines WHERE app_id = $1", .text(appId))?.integer(0) ?? 0)
    }

    func receiptValidationCount(appId: String) throws -> Int {
        Int(try row("SELECT COUNT(*) FROM receipt_validations WHERE app_id = $1", .text(appId))?.integer(0) ?? 0)
    }

    func recordBackfillLine(appId: String, lineDigest: String, appUserId: String, at: Timestamp) throws -> Bool {
        try execute(
            """
            INSERT INTO backfill_lines (app_id, line_digest, app_user_id, imported_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (app_id, line_digest) DO NOTHING
            """, .text(appId), .text(lineDigest), .text(appUserId), SQLValue(at)) > 0
    }
}
