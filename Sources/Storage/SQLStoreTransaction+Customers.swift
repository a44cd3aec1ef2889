import AppStoreModels

/// Customers, their identifiers, and the row lock that serializes one customer's updates.
extension SQLStoreTransaction {
    func customer(id: Int64) throws -> CustomerRecord? {
        guard
            let row = try row(
                "SELECT id, app_id, app_user_id, first_seen_at, last_seen_at FROM customers WHERE id = $1",
                .integer(id))
        else { return nil }
        let texts = { (sql: String) throws(StoreError) -> [String] in
            try self.connection.query(sql, [.integer(id)]).map { row throws(StoreError) in try row.text(0) }
        }
        return CustomerRecord(
            id: try row.integer(0), appId: try row.text(1), appUserId: try row.text(2),
            aliases: try texts("SELECT alias FROM customer_aliases WHERE customer_id = $1 ORDER BY alias"),
            appAccountTokens: try texts(
                "SELECT token FROM customer_app_account_tokens WHERE customer_id = $1 ORDER BY token"),
            originalTransactionIds: try texts(
                """
                SELECT original_transaction_id FROM customer_transactions
                WHERE customer_id = $1 ORDER BY original_transaction_id
                """),
            firstSeenAt: try row.timestamp(3), lastSeenAt: try row.timestamp(4))
    }

    func customer(appId: String, _ lookup: CustomerLookup) throws -> CustomerRecord? {
        guard let id = try customerId(appId: appId, lookup) else { return nil }
        return try customer(id: id)
    }

    func customerId(appId: String, _ lookup: CustomerLookup) throws -> Int64? {
        let found: SQLRow?
        switch lookup {
        case .appUserId(let value):
            found = try row(
                "SELECT id FROM customers WHERE app_id = $1 AND app_user_id = $2", .text(appId), .text(value))
        case .alias(let value):
            found = try row(
                "SELECT customer_id FROM customer_aliases WHERE app_id = $1 AND alias = $2", .text(appId), .text(value))
        case .appAccountToken(let value):
            found = try row(
                "SELECT customer_id FROM customer_app_account_tokens WHERE app_id = $1 AND token = $2", .text(appId),
                .text(value))
        case .originalTransactionId(let value):
            found = try row(
                """
                SELECT customer_id FROM customer_transactions
                WHERE app_id = $1 AND original_transaction_id = $2
                """, .text(appId), .text(value))
        }
        return try found?.integer(0)
    }

    /// The customer upserts' rule for a customer already stored: `last_seen_at` only moves forward.
    private static let customerSeenAgain = """
        ON CONFLICT (app_id, app_user_id) DO UPDATE SET last_seen_at =
            CASE WHEN excluded.last_seen_at > customers.last_seen_at
                 THEN excluded.last_seen_at ELSE customers.last_seen_at END
        """

    func ensureCustomer(appId: String, appUserId: String, at: Timestamp) throws -> CustomerRecord {
        guard
            let id = try insertReturningId(
                """
                INSERT INTO customers (app_id, app_user_id, first_seen_at, last_seen_at) VALUES ($1, $2, $3, $3)
                \(Self.customerSeenAgain)
                RETURNING id
                """, [.text(appId), .text(appUserId), SQLValue(at)])
        else { throw StoreError(.database, "customer upsert returned no row") }
        return try lockCustomer(id: id)
    }

    func ensureCustomers(appId: String, appUserIds: [String], at: Timestamp) throws -> [Int64] {
        // Each id once (PostgreSQL's upsert may not touch a row twice in one statement) and
        // sorted, so that imports running side by side take the customers' locks in one order.
        let distinct = Set(appUserIds).sorted()
        let returned = try insertRowsReturning(
            into: "INSERT INTO customers (app_id, app_user_id, first_seen_at, last_seen_at)",
            suffix: "\(Self.customerSeenAgain)\nRETURNING app_user_id, id", width: 4,
            distinct.map { [.text(appId), .text($0), SQLValue(at), SQLValue(at)] })
        var ids: [String: Int64] = [:]
        for row in returned { ids[try row.text(0)] = try row.integer(1) }
        return try appUserIds.map { appUserId throws(StoreError) in
            guard let id = ids[appUserId] else {
                throw StoreError(.database, "customer upsert returned no row for one of \(appUserIds.count) ids")
            }
            return id
        }
    }

    @discardableResult
    func lockCustomer(id: Int64) throws -> CustomerRecord {
        let sql: String
        switch dialect {
        case .postgres: sql = "SELECT id FROM customers WHERE id = $1 FOR UPDATE"
        // The single writer connection already excludes every other write.
        case .sqlite: sql = "SELECT id FROM customers WHERE id = $1"
        }
        guard try row(sql, .integer(id)) != nil, let customer = try customer(id: id) else {
            throw StoreError(.notFound, "customer \(id) does not exist")
        }
        return customer
    }

    @discardableResult
    func sharePurchase(_ originalTransactionId: String, customerId: Int64, at: Timestamp) throws -> Bool {
        try execute(
            """
            INSERT INTO customer_shared_transactions (app_id, original_transaction_id, customer_id, shared_at)
            SELECT app_id, $2, id, $3 FROM customers WHERE id = $1
            ON CONFLICT (app_id, original_transaction_id, customer_id) DO NOTHING
            """, .integer(customerId), .text(originalTransactionId), SQLValue(at)) == 1
    }

    func customersSharing(appId: String, originalTransactionId: String) throws -> [Int64] {
        try rows(
            """
            SELECT customer_id FROM customer_shared_transactions
            WHERE app_id = $1 AND original_transaction_id = $2 ORDER BY customer_id
            """, .text(appId), .text(originalTransactionId)
        ).map { row throws(StoreError) in try row.integer(0) }
    }

    func claimOriginalTransaction(_ originalTransactionId: String, customerId: Int64, at: Timestamp) throws
        -> Int64?
    {
        let inserted = try execute(
            """
            INSERT INTO customer_transactions (app_id, original_transaction_id, customer_id, claimed_at)
            SELECT app_id, $2, id, $3 FROM customers WHERE id = $1
            ON CONFLICT (app_id, original_transaction_id) DO NOTHING
            """, .integer(customerId), .text(originalTransactionId), SQLValue(at))
        if inserted == 1 { return nil }
        guard
            let owner = try row(
                """
                SELECT ct.customer_id FROM customer_transactions ct JOIN customers c ON c.app_id = ct.app_id
                WHERE c.id = $1 AND ct.original_transaction_id = $2
                """, .integer(customerId), .text(originalTransactionId))
        else { throw StoreError(.notFound, "customer \(customerId) does not exist") }
        let previous = try owner.integer(0)
        if previous == customerId { return nil }
        try execute(
            """
            UPDATE customer_transactions SET customer_id = $1, claimed_at = $3
            WHERE original_transaction_id = $2 AND app_id = (SELECT app_id FROM customers WHERE id = $1)
            """, .integer(customerId), .text(originalTransactionId), SQLValue(at))
        return previous
    }

    func claimOriginalTransactions(_ claims: [(originalTransactionId: String, customerId: Int64)], at: Timestamp)
        throws -> [Int64?]
    {
        // The first claim of each original goes in the bulk statement; a claim it did not
        // insert (owned before, a repeated original, an unknown customer) then takes the
        // one-row path in the given order, which gives what claims one by one would.
        var seen: Set<String> = []
        let isFirst = claims.map { seen.insert($0.originalTransactionId).inserted }
        let firsts = claims.indices.filter { isFirst[$0] }
        let returned = try insertRowsReturning(
            into: """
                INSERT INTO customer_transactions (app_id, original_transaction_id, customer_id, claimed_at)
                SELECT c.app_id, v.column2, c.id, v.column3 FROM (
                """,
            suffix: """
                ) AS v, customers c WHERE c.id = v.column1
                ON CONFLICT (app_id, original_transaction_id) DO NOTHING
                RETURNING original_transaction_id, customer_id
                """, width: 3,
            firsts.map { [.integer(claims[$0].customerId), .text(claims[$0].originalTransactionId), SQLValue(at)] })
        var inserted: [String: Int64] = [:]
        for row in returned { inserted[try row.text(0)] = try row.integer(1) }
        var previous: [Int64?] = []
        previous.reserveCapacity(claims.count)
        for (index, claim) in claims.enumerated() {
            if isFirst[index], inserted[claim.originalTransactionId] == claim.customerId {
                previous.append(nil)
            } else {
                previous.append(
                    try claimOriginalTransaction(claim.originalTransactionId, customerId: claim.customerId, at: at))
            }
        }
        return previous
    }

    func addAlias(_ alias: String, customerId: Int64, at: Timestamp) throws {
        try addIdentifier(
            insert: """
                INSERT INTO customer_aliases (app_id, alias, customer_id, created_at)
                SELECT app_id, $2, id, $3 FROM customers WHERE id = $1
                ON CONFLICT (app_id, alias) DO NOTHING
                """,
            owner: """
                SELECT a.customer_id FROM customer_aliases a JOIN customers c ON c.app_id = a.app_id
                WHERE c.id = $1 AND a.alias = $2
                """, value: alias, customerId: customerId, at: at, what: "alias")
    }

    func addAppAccountToken(_ token: String, customerId: Int64, at: Timestamp) throws {
        try addIdentifier(
            insert: """
                INSERT INTO customer_app_account_tokens (app_id, token, customer_id, created_at)
                SELECT app_id, $2, id, $3 FROM customers WHERE id = $1
                ON CONFLICT (app_id, token) DO NOTHING
                """,
            owner: """
                SELECT t.customer_id FROM customer_app_account_tokens t JOIN customers c ON c.app_id = t.app_id
                WHERE c.id = $1 AND t.token = $2
                """, value: token, customerId: customerId, at: at, what: "appAccountToken")
    }

    private func addIdentifier(
        insert: String, owner: String, value: String, customerId: Int64, at: Timestamp, what: String
    ) throws(StoreError) {
        if try connection.execute(insert, [.integer(customerId), .text(value), SQLValue(at)]) == 1 { return }
        guard let row = try connection.query(owner, [.integer(customerId), .text(value)]).first else {
            throw StoreError(.notFound, "customer \(customerId) does not exist")
        }
        if try row.integer(0) != customerId {
            throw StoreError(.duplicate, "the \(what) already belongs to another customer")
        }
    }
}
