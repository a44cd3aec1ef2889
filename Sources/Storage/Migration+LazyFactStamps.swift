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
        sqlite: factTables.map { fact in
            "DROP TRIGGER \(fact.table)_stamp_insert; DROP TRIGGER \(fact.table)_stamp_delete; "
                + "DROP TRIGGER \(fact.table)_stamp_update;"
        }.joined(separator: "\n")
            + factTables.map { restampTriggers(table: $0.table, purchase: $0.purchase, factsOnly: $0.factsOnly) }
            .joined(),
        postgres: """
            SELECT 1;
            """)

    /// The three triggers that give the purchase of each row of `table` a new stamp, if it has
    /// one (`factRowTriggers`). With `factsOnly`, rows without a fact (notifications) restamp
    /// nothing.
    static func restampTriggers(table: String, purchase: String, factsOnly: Bool = false) -> String {
        factRowTriggers(
            named: "restamp", table: table, purchase: purchase,
            isFact: { row in factsOnly ? "\(row).fact_json IS NOT NULL" : "1" }
        ) { row, condition in
            """
                UPDATE purchase_fact_stamps SET previous_stamp = stamp, stamp = random()
                WHERE app_id = \(row).app_id AND purchase_id = \(row).\(purchase) AND \(condition);
            """
        }
    }
}
