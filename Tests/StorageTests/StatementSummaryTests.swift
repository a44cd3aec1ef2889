import Testing

@testable import Storage

/// Errors name the failed statement by its first four words (`SQLiteConnection.summary`),
/// read only as far as those words.
@Suite struct StatementSummaryTests {
    @Test(arguments: [
        ("SELECT id FROM customers WHERE app_id = $1", "SELECT id FROM customers"),
        (
            "\n    INSERT INTO signed_transactions (app_id, environment)\nVALUES ($1, $2)",
            "INSERT INTO signed_transactions (app_id,"
        ),
        ("COMMIT", "COMMIT"),
        ("  BEGIN   IMMEDIATE  ", "BEGIN IMMEDIATE"),
        ("", ""),
        ("   \t\n ", ""),
        ("UPDATE\u{00A0}t\u{2003}SET a = 1", "UPDATE t SET a"),
    ])
    func firstFourWords(sql: String, summary: String) {
        #expect(SQLiteConnection.summary(of: sql) == summary)
        // What it replaced: every word of the text split, then four kept.
        #expect(sql.split(whereSeparator: \.isWhitespace).prefix(4).joined(separator: " ") == summary)
    }
}
