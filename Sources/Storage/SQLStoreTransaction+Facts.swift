import AppStoreModels
import Entitlements

/// Verified facts, stored verbatim with their decoded columns; replays are no-ops.
extension SQLStoreTransaction {
    func insertNotification(_ notification: NewNotification) throws -> Insertion {
        let json = notification.fact.map(Self.jsonText)
        let payload = StoredJWS(notification.signedPayload)
        try saveJWSHeaders(of: [payload])
        var columns: [SQLValue] = [
            .text(notification.appId), .text(notification.notificationUUID), .text(notification.type),
            SQLValue(notification.subtype), SQLValue(notification.environment?.rawValue),
            SQLValue(notification.originalTransactionId), SQLValue(notification.signedDate),
            .text(payload.rest), SQLValue(json), SQLValue(notification.receivedAt),
            SQLValue(notification.presumed?.at), SQLValue(notification.presumed?.outcome),
        ]
        if let header = payload.header { columns.append(.text(header.digest)) }
        // A payload without a header apart names only the columns there were before 0030.
        let id = try insertReturningId(
            Self.singleRowInsert(
                into: "notifications", Self.notificationColumns, values: columns,
                "ON CONFLICT (app_id, notification_uuid) DO NOTHING RETURNING id"), columns)
        if let id, let json, let fact = notification.fact {
            insertedFacts[InsertedFact(part: 2, id: id)] = (json, .notification(fact))
            try recordFactWrite(
                appId: notification.appId, purchaseId: notification.originalTransactionId,
                key: FactRowKey(part: 2, id: id), json: json, fact: .notification(fact))
        }
        return id.map(Insertion.inserted) ?? .duplicate
    }

    /// The columns of `notifications` a row is written with, in the order of `insertNotification`:
    /// the last, the digest of the header stored in `jws_headers`, only when it is stored apart.
    static let notificationColumns = [
        "app_id", "notification_uuid", "notification_type", "subtype", "environment", "original_transaction_id",
        "signed_date", "signed_payload", "fact_json", "received_at", "processed_at", "outcome",
        "signed_payload_header_digest",
    ]

    /// `INSERT INTO table (…) VALUES ($1, …) suffix` of one row of `values`: the first
    /// `values.count` of `columns` (the header's digest, last, only when the row has one).
    static func singleRowInsert(into table: String, _ columns: [String], values: [SQLValue], _ suffix: String)
        -> String
    {
        multiRowStatement(
            insert(into: table, columns, headerApart: values.count == columns.count), suffix: suffix,
            width: values.count, rows: 1)
    }

    /// The INSERT of rows into a fact table whose last column is a header's digest: named only
    /// with `headerApart`, so a row without one names only the columns there were before the
    /// table's migration (0029, 0030, 0031).
    static func insert(into table: String, _ columns: [String], headerApart: Bool) -> String {
        "INSERT INTO \(table) (\((headerApart ? columns[...] : columns.dropLast()).joined(separator: ", ")))"
    }

    @discardableResult
    func finishNotification(id: Int64, outcome: String, at: Timestamp) throws -> Bool {
        try execute(
            """
            UPDATE notifications SET processed_at = $2, outcome = $3
            WHERE id = $1 AND (processed_at IS DISTINCT FROM $2 OR outcome IS DISTINCT FROM $3)
            """, .integer(id), SQLValue(at), .text(outcome)) > 0
    }

    func notification(appId: String, uuid: String) throws -> NotificationRecord? {
        try row(
            """
            SELECT n.id, n.app_id, n.notification_uuid, n.notification_type, n.subtype, n.environment,
                   n.original_transaction_id, n.signed_date, n.signed_payload, n.received_at, n.processed_at, n.outcome,
                   n.signed_payload_header_digest, h.header
            FROM notifications n
            LEFT JOIN jws_headers h ON h.digest = n.signed_payload_header_digest
            WHERE n.app_id = $1 AND n.notification_uuid = $2
            """, .text(appId), .text(uuid)
        ).map { row throws(StoreError) in
            NotificationRecord(
                id: try row.integer(0), appId: try row.text(1), notificationUUID: try row.text(2),
                type: try row.text(3), subtype: try row.optionalText(4),
                environment: Self.environment(try row.optionalText(5)), originalTransactionId: try row.optionalText(6),
                signedDate: try row.timestamp(7),
                signedPayload: try StoredJWS.joined(
                    rest: row.text(8), digest: row.optionalText(12), header: row.optionalText(13)),
                receivedAt: try row.timestamp(9),
                processedAt: try row.optionalTimestamp(10), outcome: try row.optionalText(11))
        }
    }

    func recentNotifications(appId: String, _ filter: NotificationFilter) throws -> [NotificationSummary] {
        // An absent filter is NULL: one statement, every value bound.
        try rows(
            Self.recentNotificationsPage, .text(appId), SQLValue(filter.outcome), SQLValue(filter.type),
            SQLValue(filter.before), .integer(Int64(filter.limit))
        ).map { row throws(StoreError) in
            NotificationSummary(
                id: try row.integer(0), notificationUUID: try row.text(1), type: try row.text(2),
                subtype: try row.optionalText(3), environment: Self.environment(try row.optionalText(4)),
                originalTransactionId: try row.optionalText(5), signedDate: try row.timestamp(6),
                receivedAt: try row.timestamp(7), outcome: try row.optionalText(8))
        }
    }

    /// A page of the app's (`$1`) notifications, newest first, before id `$4` (none: from the
    /// newest), with outcome `$2` and type `$3` when given, `$5` of them: a walk of
    /// `notifications_app` (migration 0034) down from `$4`, which stops at the page.
    static let recentNotificationsPage = """
        SELECT id, notification_uuid, notification_type, subtype, environment, original_transaction_id,
               signed_date, received_at, outcome
        FROM notifications
        WHERE app_id = $1 AND (CAST($2 AS TEXT) IS NULL OR outcome = $2)
          AND (CAST($3 AS TEXT) IS NULL OR notification_type = $3)
          AND id < COALESCE(CAST($4 AS BIGINT), 9223372036854775807)
        ORDER BY id DESC LIMIT $5
        """

    func notificationCount(appId: String) throws -> Int {
        Int(try row("SELECT COUNT(*) FROM notifications WHERE app_id = $1", .text(appId))?.integer(0) ?? 0)
    }

    func insertTransaction(_ transaction: NewTransaction) throws -> Insertion {
        let json = Self.jsonText(transaction.fact)
        let jws = transaction.jws.map(StoredJWS.init)
        try saveJWSHeaders(of: [jws])
        let columns = Self.columns(transaction, jws: jws, factJSON: json)
        let id = try insertReturningId(
            Self.singleRowInsert(
                into: "signed_transactions", Self.transactionColumns, values: columns,
                "ON CONFLICT (app_id, environment, transaction_id, signed_date) DO NOTHING RETURNING id"), columns)
        if let id {
            insertedFacts[InsertedFact(part: 0, id: id)] = (json, .transaction(transaction.fact))
            try recordFactWrite(
                appId: transaction.appId, purchaseId: transaction.fact.originalTransactionId,
                key: FactRowKey(part: 0, id: id), json: json, fact: .transaction(transaction.fact))
        }
        return id.map(Insertion.inserted) ?? .duplicate
    }

    func insertTransactions(_ transactions: [NewTransaction]) throws -> Int {
        let stored = transactions.map { $0.jws.map(StoredJWS.init) }
        try saveJWSHeaders(of: stored)
        // Piece by piece, in the order given: a `COPY` on PostgreSQL where it can be, else the
        // INSERTs. Of two rows with one key the first is kept either way (a later piece's copy
        // fails on it, and its INSERTs skip it).
        var inserted = 0
        var start = 0
        while start < transactions.count {
            let end = min(start + Self.maximumRowsPerCopy, transactions.count)
            if dialect == .postgres, end - start >= Self.minimumRowsToCopy,
                let copied = try copyTransactions(transactions, stored, start..<end)
            {
                inserted += copied
            } else {
                inserted += try insertTransactionRows(transactions, stored, start..<end)
            }
            start = end
        }
        return inserted
    }

    /// Rows `range` of a bulk insert by multi-row INSERTs, in runs of rows of one shape (header
    /// apart or not), in the order given: of two rows with one key, the first is kept, as one
    /// statement would.
    private func insertTransactionRows(_ transactions: [NewTransaction], _ stored: [StoredJWS?], _ range: Range<Int>)
        throws -> Int
    {
        var inserted = 0
        for (run, headerApart) in Self.runsOfOneShape(stored, range) {
            inserted += try insertRows(
                into: Self.insert(into: "signed_transactions", Self.transactionColumns, headerApart: headerApart),
                onConflict: "ON CONFLICT (app_id, environment, transaction_id, signed_date) DO NOTHING",
                width: headerApart ? 11 : 10, run.map { Self.columns(transactions[$0], jws: stored[$0]) })
        }
        return inserted
    }

    /// `range` cut into runs of consecutive rows of one shape: whether each row's header is
    /// stored apart (one more column) or not.
    static func runsOfOneShape(_ stored: [StoredJWS?], _ range: Range<Int>) -> [(Range<Int>, headerApart: Bool)] {
        var runs: [(Range<Int>, headerApart: Bool)] = []
        var start = range.lowerBound
        while start < range.upperBound {
            let headerApart = stored[start]?.header != nil
            var end = start + 1
            while end < range.upperBound, (stored[end]?.header != nil) == headerApart { end += 1 }
            runs.append((start..<end, headerApart))
            start = end
        }
        return runs
    }

    /// The fewest rows `insertTransactions` sends in a `COPY` on PostgreSQL: below, the
    /// savepoint and the copy's own round trips cost more than they save.
    static let minimumRowsToCopy = 64

    /// The most rows in one `COPY`: one statement under the URL's `statement_timeout`, as each
    /// 512-row INSERT is, so a batch the INSERTs could store is not refused for its size (a
    /// piece takes tens of milliseconds).
    static let maximumRowsPerCopy = 2_048

    /// Rows `range` in one `COPY`, when none of their keys is stored already or given twice: the
    /// copy then inserts exactly what the INSERTs would. It cannot skip a key already held, so
    /// the first one fails it; its savepoint takes back what it wrote and `nil` leaves the rows
    /// to the INSERTs, which skip them. (PostgreSQL inserted a bulk import's rows ~13% faster
    /// by `COPY`, and reads its text with less work than 5,632 bound values a statement.)
    private func copyTransactions(_ transactions: [NewTransaction], _ stored: [StoredJWS?], _ range: Range<Int>)
        throws -> Int?
    {
        // `connection` is a `PostgresConnection` whenever the dialect is PostgreSQL's.
        guard let postgres = connection as? PostgresConnection else { return nil }
        var text = PostgresCopyText(reservingCapacity: range.count * 2_048)
        for index in range {
            var row = Self.columns(transactions[index], jws: stored[index])
            if row.count < Self.transactionColumns.count { row.append(.null) }
            try text.append(row: row)
        }
        do {
            let copied = try withSavepoint {
                try postgres.copy(into: "signed_transactions", columns: Self.transactionColumns, text)
            }
            rowsCopied += copied
            return copied
        } catch let error as StoreError where error.code == .duplicate {
            return nil
        }
    }

    /// The columns of `signed_transactions` a row is written with, in the order of `columns`:
    /// the last, the digest of the header stored in `jws_headers`, only when the header is
    /// stored apart.
    static let transactionColumns = [
        "app_id", "environment", "transaction_id", "original_transaction_id", "product_id", "signed_date", "jws",
        "source", "fact_json", "received_at", "jws_header_digest",
    ]

    /// The distinct headers stored apart among `stored`, as `saveJWSHeaders` saves them: in
    /// digest order, so two writers inserting the same new headers lock them in one order.
    func saveJWSHeaders(of stored: [StoredJWS?]) throws {
        var headers: [String: String] = [:]
        for case let header? in stored.lazy.compactMap({ $0?.header }) { headers[header.digest] = header.text }
        try saveJWSHeaders(headers.sorted { $0.key < $1.key }.map { (digest: $0.key, text: $0.value) })
    }

    /// Each header `jws_headers` may not have yet, in the transaction that writes the rows
    /// naming it (so a rollback takes both away).
    func saveJWSHeaders(_ headers: [(digest: String, text: String)]) throws {
        guard !headers.isEmpty else { return }
        _ = try insertRows(
            into: "INSERT INTO jws_headers (digest, header)", onConflict: "ON CONFLICT (digest) DO NOTHING", width: 2,
            headers.map { [.text($0.digest), .text($0.text)] })
    }

    /// The columns of one `signed_transactions` row, in the order of `transactionColumns`: the
    /// JWS as `jws` splits it, or whole when `jws` is not given.
    static func columns(_ transaction: NewTransaction, jws: StoredJWS? = nil, factJSON: String? = nil) -> [SQLValue] {
        let fact = transaction.fact
        var columns: [SQLValue] = [
            .text(transaction.appId), .text(fact.environment.rawValue), .text(fact.transactionId),
            .text(fact.originalTransactionId), .text(fact.productId), SQLValue(fact.signedDate),
            SQLValue(jws?.rest ?? transaction.jws), .text(transaction.source), .text(factJSON ?? jsonText(fact)),
            SQLValue(transaction.receivedAt),
        ]
        if let header = jws?.header { columns.append(.text(header.digest)) }
        return columns
    }

    /// A subscription has one renewal info per `signedDate`. Apple may sign two that differ at
    /// the same instant (a status and a notification, say); keeping whichever arrived first
    /// would make the derived state depend on arrival order. The row kept is the greater by
    /// (JWS, fact): the same whatever the order, and a replay of either changes nothing. The
    /// JWS compared is the whole text, its header joined back where it is stored apart (as
    /// `RenewalInfoKey.wins` compares `NewRenewalInfo.jws`). Text compares byte by byte on both
    /// engines (PostgreSQL's database collation might not), as Swift's `String` order of these
    /// ASCII texts does.
    var renewalInfoConflict: String {
        dialect == .postgres ? Self.renewalInfoConflictPostgres : Self.renewalInfoConflictSQLite
    }

    // Built once: every renewal info a POST stores names one.
    private static let renewalInfoConflictSQLite = renewalInfoConflict(.sqlite)
    private static let renewalInfoConflictPostgres = renewalInfoConflict(.postgres)

    private static func renewalInfoConflict(_ dialect: SQLDialect) -> String {
        let binary = dialect == .postgres ? " COLLATE \"C\"" : ""
        // The header as committed when compared (`0032_renewal_header_reader` says why PostgreSQL
        // asks a function); SQLite's one writer sees every header its transaction can name.
        func jws(_ row: String) -> String {
            let header =
                dialect == .postgres
                ? "storekeeper_jws_header(\(row).jws_header_digest)"
                : "(SELECT h.header FROM jws_headers h WHERE h.digest = \(row).jws_header_digest)"
            return "(COALESCE(\(header) || '.', '') || COALESCE(\(row).jws, ''))"
        }
        return """
            ON CONFLICT (app_id, environment, original_transaction_id, signed_date) DO UPDATE SET
                product_id = excluded.product_id, jws = excluded.jws, jws_header_digest = excluded.jws_header_digest,
                source = excluded.source, fact_json = excluded.fact_json, received_at = excluded.received_at
            WHERE (\(jws("excluded"))\(binary), excluded.fact_json\(binary))
                > (\(jws("signed_renewal_infos"))\(binary), signed_renewal_infos.fact_json\(binary))
            """
    }

    func insertRenewalInfo(_ renewalInfo: NewRenewalInfo) throws -> Insertion {
        let json = Self.jsonText(renewalInfo.fact)
        let jws = renewalInfo.jws.map(StoredJWS.init)
        try saveJWSHeaders(of: [jws])
        let columns = Self.columns(renewalInfo, jws: jws, factJSON: json)
        let id = try insertReturningId(
            Self.singleRowInsert(
                into: "signed_renewal_infos", Self.renewalInfoColumns, values: columns,
                renewalInfoConflict + "\nRETURNING id"), columns)
        // Also a row this insert rewrote (the greater of two at one instant): it holds this fact.
        if let id {
            insertedFacts[InsertedFact(part: 1, id: id)] = (json, .renewalInfo(renewalInfo.fact))
            try recordFactWrite(
                appId: renewalInfo.appId, purchaseId: renewalInfo.fact.originalTransactionId,
                key: FactRowKey(part: 1, id: id), json: json, fact: .renewalInfo(renewalInfo.fact))
        }
        return id.map(Insertion.inserted) ?? .duplicate
    }

    func insertRenewalInfos(_ renewalInfos: [NewRenewalInfo]) throws -> Int {
        // One row per key within a statement (PostgreSQL refuses to update a row twice in one
        // statement): the row that would win anyway, in the order first seen.
        var index: [RenewalInfoKey: Int] = [:]
        var kept: [(renewalInfo: NewRenewalInfo, json: String)] = []
        for renewalInfo in renewalInfos {
            let candidate = (renewalInfo: renewalInfo, json: Self.jsonText(renewalInfo.fact))
            let key = RenewalInfoKey(renewalInfo)
            if let existing = index[key] {
                if RenewalInfoKey.wins(candidate, over: kept[existing]) { kept[existing] = candidate }
            } else {
                index[key] = kept.count
                kept.append(candidate)
            }
        }
        let stored = kept.map { $0.renewalInfo.jws.map(StoredJWS.init) }
        try saveJWSHeaders(of: stored)
        var inserted = 0
        for (run, headerApart) in Self.runsOfOneShape(stored, kept.indices) {
            inserted += try insertRows(
                into: Self.insert(into: "signed_renewal_infos", Self.renewalInfoColumns, headerApart: headerApart),
                onConflict: renewalInfoConflict,
                width: headerApart ? 10 : 9,
                run.map { Self.columns(kept[$0].renewalInfo, jws: stored[$0], factJSON: kept[$0].json) })
        }
        return inserted
    }

    /// The columns of `signed_renewal_infos` a row is written with, in the order of `columns`:
    /// the last, the digest of the header stored in `jws_headers` (migration
    /// `0031_renewal_jws_headers`), only when the header is stored apart.
    static let renewalInfoColumns = [
        "app_id", "environment", "original_transaction_id", "product_id", "signed_date", "jws", "source", "fact_json",
        "received_at", "jws_header_digest",
    ]

    /// The columns of one `signed_renewal_infos` row, in the order of `renewalInfoColumns`: the
    /// JWS as `jws` splits it, or whole when `jws` is not given.
    static func columns(_ renewalInfo: NewRenewalInfo, jws: StoredJWS? = nil, factJSON: String? = nil) -> [SQLValue] {
        let fact = renewalInfo.fact
        var columns: [SQLValue] = [
            .text(renewalInfo.appId), .text(fact.environment.rawValue), .text(fact.originalTransactionId),
            .text(fact.productId), SQLValue(fact.signedDate), SQLValue(jws?.rest ?? renewalInfo.jws),
            .text(renewalInfo.source), .text(factJSON ?? jsonText(fact)), SQLValue(renewalInfo.receivedAt),
        ]
        if let header = jws?.header { columns.append(.text(header.digest)) }
        return columns
    }

    func insertReceiptValidation(_ validation: NewReceiptValidation) throws -> Int64 {
        guard
            let id = try insertReturningId(
                """
                INSERT INTO receipt_validations (app_id, customer_id, environment, receipt_data, response_body,
                                                 received_at)
                VALUES ($1, $2, $3, $4, $5, $6)
                RETURNING id
                """,
                [
                    .text(validation.appId), SQLValue(validation.customerId),
                    SQLValue(validation.environment?.rawValue), .text(validation.receiptData),
                    SQLValue(validation.responseBody), SQLValue(validation.receivedAt),
                ])
        else { throw StoreError(.database, "receipt insert returned no row") }
        return id
    }

    /// The original transactions whose facts customer `$1` sees: those it owns and those shared
    /// with it (the `share` transfer policy).
    static let customerPurchases = """
        SELECT original_transaction_id FROM customer_transactions WHERE customer_id = $1
        UNION SELECT original_transaction_id FROM customer_shared_transactions WHERE customer_id = $1
        """

    func facts(customerId: Int64) throws -> [Fact] {
        try factJSON(customerId: customerId).map { row throws(StoreError) in try row.decode() }
    }

    func storedFacts(customerId: Int64, kind: FactKind, after: Int64?, limit: Int) throws -> [StoredFact] {
        switch kind {
        case .transaction:
            return try rows(
                """
                SELECT t.id, t.environment, t.original_transaction_id, t.signed_date, t.jws, t.fact_json, t.received_at,
                       t.jws_header_digest, h.header
                FROM signed_transactions t
                LEFT JOIN jws_headers h ON h.digest = t.jws_header_digest
                WHERE t.app_id = (SELECT app_id FROM customers WHERE id = $1)
                  AND t.original_transaction_id IN (\(Self.customerPurchases)) AND t.id > $2
                ORDER BY t.id LIMIT $3
                """, .integer(customerId), .integer(after ?? 0), SQLValue(limit)
            ).map { row throws(StoreError) in
                try Self.storedFact(row, kind: .transaction) { text throws(StoreError) in
                    .transaction(try Self.decode(TransactionFact.self, text, column: "fact_json"))
                }
            }
        case .renewalInfo:
            return try rows(
                """
                SELECT r.id, r.environment, r.original_transaction_id, r.signed_date, r.jws, r.fact_json, r.received_at,
                       r.jws_header_digest, h.header
                FROM signed_renewal_infos r
                LEFT JOIN jws_headers h ON h.digest = r.jws_header_digest
                WHERE r.app_id = (SELECT app_id FROM customers WHERE id = $1)
                  AND r.original_transaction_id IN (\(Self.customerPurchases)) AND r.id > $2
                ORDER BY r.id LIMIT $3
                """, .integer(customerId), .integer(after ?? 0), SQLValue(limit)
            ).map { row throws(StoreError) in
                try Self.storedFact(row, kind: .renewalInfo) { text throws(StoreError) in
                    .renewalInfo(try Self.decode(RenewalFact.self, text, column: "fact_json"))
                }
            }
        case .notification:
            return try rows(
                """
                SELECT n.id, n.environment, n.original_transaction_id, n.signed_date, n.signed_payload, n.fact_json,
                       n.received_at, n.signed_payload_header_digest, h.header
                FROM notifications n
                LEFT JOIN jws_headers h ON h.digest = n.signed_payload_header_digest
                WHERE n.app_id = (SELECT app_id FROM customers WHERE id = $1)
                  AND n.original_transaction_id IN (\(Self.customerPurchases)) AND n.id > $2
                ORDER BY n.id LIMIT $3
                """, .integer(customerId), .integer(after ?? 0), SQLValue(limit)
            ).map { row throws(StoreError) in
                try Self.storedFact(row, kind: .notification) { text throws(StoreError) in
                    .notification(try Self.decode(NotificationFact.self, text, column: "fact_json"))
                }
            }
        case .playSubscription:
            return try storedPlayFacts(
                customerId: customerId, kind: kind, playKind: .subscription, after: after, limit: limit)
        case .playProductPurchase:
            return try storedPlayFacts(
                customerId: customerId, kind: kind, playKind: .product, after: after, limit: limit)
        case .playVoidedPurchase:
            return try storedPlayFacts(
                customerId: customerId, kind: kind, playKind: .voided, after: after, limit: limit)
        case .playOrder:
            return try rows(
                """
                SELECT o.id, o.environment, o.purchase_token, o.read_at, o.raw_json, o.fact_json, o.received_at
                FROM play_orders o
                WHERE o.app_id = (SELECT app_id FROM customers WHERE id = $1)
                  AND o.purchase_token IN (\(Self.customerPurchases)) AND o.id > $2
                ORDER BY o.id LIMIT $3
                """, .integer(customerId), .integer(after ?? 0), SQLValue(limit)
            ).map { row throws(StoreError) in
                try Self.storedFact(row, kind: kind) { text throws(StoreError) in
                    .playOrder(try Self.decode(PlayOrderFact.self, text, column: "fact_json"))
                }
            }
        }
    }

    /// Play facts of one kind with their verbatim JSON (`raw`), after the cursor `after`.
    private func storedPlayFacts(customerId: Int64, kind: FactKind, playKind: PlayFactKind, after: Int64?, limit: Int)
        throws -> [StoredFact]
    {
        try rows(
            """
            SELECT p.id, p.environment, p.purchase_token, p.read_at, p.raw_json, p.fact_json, p.received_at
            FROM play_snapshots p
            WHERE p.app_id = (SELECT app_id FROM customers WHERE id = $1)
              AND p.purchase_token IN (\(Self.customerPurchases)) AND p.kind = $2 AND p.id > $3
            ORDER BY p.id LIMIT $4
            """, .integer(customerId), .text(playKind.rawValue), .integer(after ?? 0), SQLValue(limit)
        ).map { row throws(StoreError) in
            try Self.storedFact(row, kind: kind) { text throws(StoreError) in
                try FactJSON(kind: kind, json: text).decode()
            }
        }
    }

    static func factKind(playKind raw: String) throws(StoreError) -> FactKind {
        switch PlayFactKind(rawValue: raw) {
        case .subscription?: return .playSubscription
        case .product?: return .playProductPurchase
        case .voided?: return .playVoidedPurchase
        case .order?: return .playOrder
        case nil: throw StoreError(.corruptValue, "play_snapshots.kind has an unknown value")
        }
    }

    private static func storedFact(
        _ row: SQLRow, kind: FactKind, decode: (String) throws(StoreError) -> Fact
    ) throws(StoreError) -> StoredFact {
        StoredFact(
            sequence: try row.integer(0), kind: kind, environment: environment(try row.optionalText(1)),
            originalTransactionId: try row.optionalText(2), signedDate: try row.timestamp(3),
            // Transactions, renewal infos and notifications name their JWS header in columns 7 and 8.
            raw: kind == .transaction || kind == .renewalInfo || kind == .notification
                ? try StoredJWS.joined(
                    rest: row.optionalText(4), digest: row.optionalText(7), header: row.optionalText(8))
                : try row.optionalText(4),
            fact: try row.optionalText(5).map(decode),
            receivedAt: try row.timestamp(6))
    }
}

/// The unique key of `signed_renewal_infos`, and the rule of `renewalInfoConflict` in Swift.
private struct RenewalInfoKey: Hashable {
    var appId: String
    var environment: AppStoreEnvironment
    var originalTransactionId: String
    var signedDate: Int64

    init(_ renewalInfo: NewRenewalInfo) {
        appId = renewalInfo.appId
        environment = renewalInfo.fact.environment
        originalTransactionId = renewalInfo.fact.originalTransactionId
        signedDate = renewalInfo.fact.signedDate.millisecondsSince1970
    }

    /// Whether `candidate` (a renewal info and its fact's JSON) wins over `other`: the greater
    /// by (whole JWS text, fact JSON), a missing JWS as empty text.
    static func wins(
        _ candidate: (renewalInfo: NewRenewalInfo, json: String),
        over other: (renewalInfo: NewRenewalInfo, json: String)
    ) -> Bool {
        let (jws, otherJWS) = (candidate.renewalInfo.jws ?? "", other.renewalInfo.jws ?? "")
        return jws != otherJWS ? jws > otherJWS : candidate.json > other.json
    }
}
