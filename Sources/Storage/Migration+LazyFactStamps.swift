extension Migration {
    /// Stamps only where they are used: 0027's triggers gave every purchase a stamp on every
    /// fact write, a random page of `purchase_fact_stamps` written by every ingestion (3.5% of
    /// the POST path's CPU in issue 10's profile) for the few long histories that read the
    /// stamps. From here a purchase has a stamp only once `StoreTransaction.stampFacts` gave it
    /// one (for a customer with a long history); the triggers then replace the stamps that
    /// exist, and for any other purchase the `UPDATE` finds no row and writes nothing. Stamps
    /// 0027 gave stay and are kept up to date the same way.
    static let lazyFactStamps = Migration(
        identifier: "0028_lazy_fact_stamps",
        sqlite: ["signed_transactions", "signed_renewal_infos", "notifications", "play_snapshots", "play_orders"]
            .map { table in
                "DROP TRIGGER \(table)_stamp_insert; DROP TRIGGER \(table)_stamp_delete; "
                    + "DROP TRIGGER \(table)_stamp_update;"
            }.joined(separator: "\n")
            + restampTriggers(table: "signed_transactions", purchase: "original_transaction_id")
            + restampTriggers(table: "signed_renewal_infos", purchase: "original_transaction_id")
            + restampTriggers(table: "notifications", purchase: "original_transaction_id", factsOnly: true)
            + restampTriggers(table: "play_snapshots", purchase: "purchase_token")
            + restampTriggers(table: "play_orders", purchase: "purchase_token"),
        postgres: """
            SELECT 1;
            """)

    /// The three triggers that give the purchase of each row of `table` inserted, deleted or
    /// updated in the columns facts are read from a new stamp, if it has one. An update that
    /// keeps the row's purchase restamps it once. With `factsOnly`, rows without a fact
    /// (notifications) restamp nothing.
    static func restampTriggers(table: String, purchase: String, factsOnly: Bool = false) -> String {
        func restamp(_ row: String, when condition: String) -> String {
            """
                UPDATE purchase_fact_stamps SET previous_stamp = stamp, stamp = random()
                WHERE app_id = \(row).app_id AND purchase_id = \(row).\(purchase) AND \(condition);
            """
        }
        func isFact(_ row: String) -> String { factsOnly ? "\(row).fact_json IS NOT NULL" : "1" }
        let moved = "(OLD.app_id IS NOT NEW.app_id OR OLD.\(purchase) IS NOT NEW.\(purchase))"
        return """

            CREATE TRIGGER \(table)_restamp_insert AFTER INSERT ON \(table) BEGIN
            \(restamp("NEW", when: isFact("NEW")))
            END;
            CREATE TRIGGER \(table)_restamp_delete AFTER DELETE ON \(table) BEGIN
            \(restamp("OLD", when: isFact("OLD")))
            END;
            CREATE TRIGGER \(table)_restamp_update AFTER UPDATE OF app_id, \(purchase), fact_json ON \(table) BEGIN
            \(restamp("OLD", when: "\(isFact("OLD")) AND \(moved)"))
            \(restamp("NEW", when: isFact("NEW")))
            END;
            """
    }
}
