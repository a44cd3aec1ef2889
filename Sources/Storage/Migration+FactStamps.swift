extension Migration {
    /// `purchase_fact_stamps` (SQLite only): for each purchase (an original transaction or a
    /// Play purchase token) of an app, a random stamp that every change to its fact rows
    /// replaces, by triggers on the five fact tables, whoever writes (an older instance too).
    /// `previous_stamp` is the stamp the last change replaced. A customer whose purchases carry
    /// the stamps its cached facts were read at has those facts still; a transaction that knows
    /// each change since (its own inserts, each read back with the stamps on both sides) works
    /// out the facts without reading the other rows: a long history's thousand rows were a
    /// third of its ingestion (issue 10). Random, not counted: a rolled-back change's stamp is
    /// never met again. A notification row counts only with a fact, and an update only of the
    /// columns the facts are read from (a notification's outcome changes no fact).
    ///
    /// 0028 replaces these triggers with ones that only restamp purchases already stamped.
    ///
    /// PostgreSQL keeps none: the stamp's row would be a lock every fact insert takes, and two
    /// customers sharing a purchase take their own locks first (a deadlock the fact rows, each
    /// its own, never risked). Its customers' facts are compared row by row, as before.
    static let factStamps = Migration(
        identifier: "0027_fact_stamps",
        sqlite: """
            CREATE TABLE purchase_fact_stamps (
                app_id TEXT NOT NULL,
                purchase_id TEXT NOT NULL,
                stamp BIGINT NOT NULL,
                previous_stamp BIGINT,
                PRIMARY KEY (app_id, purchase_id)
            ) WITHOUT ROWID;
            """
                + factTables.map { stampTriggers(table: $0.table, purchase: $0.purchase, factsOnly: $0.factsOnly) }
                .joined(),
        postgres: """
            SELECT 1;
            """)

    /// The five fact tables, each with its purchase column; `factsOnly`: rows may hold no fact.
    static let factTables: [(table: String, purchase: String, factsOnly: Bool)] = [
        ("signed_transactions", "original_transaction_id", false),
        ("signed_renewal_infos", "original_transaction_id", false),
        ("notifications", "original_transaction_id", true), ("play_snapshots", "purchase_token", false),
        ("play_orders", "purchase_token", false),
    ]

    /// The three triggers that stamp the purchase of each row of `table` (`WHERE` makes each
    /// `INSERT … SELECT` an upsert SQLite can parse). With `factsOnly`, rows without a purchase
    /// or a fact (notifications) stamp nothing.
    static func stampTriggers(table: String, purchase: String, factsOnly: Bool = false) -> String {
        factRowTriggers(
            named: "stamp", table: table, purchase: purchase,
            isFact: { row in factsOnly ? "\(row).\(purchase) IS NOT NULL AND \(row).fact_json IS NOT NULL" : "1" }
        ) { row, condition in
            """
                INSERT INTO purchase_fact_stamps (app_id, purchase_id, stamp)
                SELECT \(row).app_id, \(row).\(purchase), random() WHERE \(condition)
                ON CONFLICT (app_id, purchase_id) DO UPDATE SET previous_stamp = stamp, stamp = excluded.stamp;
            """
        }
    }

    /// The three triggers `<table>_<name>_insert`, `_delete` and `_update` that run `change` for
    /// the purchase of each row of `table` inserted, deleted or updated in the columns facts
    /// are read from, when `isFact` holds of the row (`NEW` or `OLD`). An update that keeps the
    /// row's purchase runs it once, for the new row, so the stamp it replaced is the one before
    /// the update; one that moves the row runs it for both purchases.
    static func factRowTriggers(
        named name: String, table: String, purchase: String, isFact: (String) -> String,
        change: (_ row: String, _ condition: String) -> String
    ) -> String {
        let moved = "(OLD.app_id IS NOT NEW.app_id OR OLD.\(purchase) IS NOT NEW.\(purchase))"
        return """

            CREATE TRIGGER \(table)_\(name)_insert AFTER INSERT ON \(table) BEGIN
            \(change("NEW", isFact("NEW")))
            END;
            CREATE TRIGGER \(table)_\(name)_delete AFTER DELETE ON \(table) BEGIN
            \(change("OLD", isFact("OLD")))
            END;
            CREATE TRIGGER \(table)_\(name)_update AFTER UPDATE OF app_id, \(purchase), fact_json ON \(table) BEGIN
            \(change("OLD", "\(isFact("OLD")) AND \(moved)"))
            \(change("NEW", isFact("NEW")))
            END;
            """
    }
}
