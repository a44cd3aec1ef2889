import AppStoreModels

/// The access scheduler's queue: customer states whose `valid_until` has passed.
extension SQLStoreTransaction {
    func claimDueCustomerStates(now: Timestamp, limit: Int) throws -> [DueCustomerState] {
        let sql: String
        switch dialect {
        case .postgres:
            // The customer's row is the lock every re-evaluation takes first (`lockCustomer`);
            // the claim takes it and the state's row without waiting, skipping customers another
            // instance or an ingestion holds (they are being re-evaluated already). Locking the
            // state too makes PostgreSQL re-check `valid_until` on its latest version, so a
            // state re-evaluated by another instance since this statement's snapshot is not
            // claimed again.
            sql = """
                SELECT s.customer_id, s.environment, s.valid_until FROM customer_states s
                JOIN customers c ON c.id = s.customer_id
                WHERE s.valid_until <= $1
                ORDER BY s.valid_until, s.customer_id, s.environment
                LIMIT $2
                FOR UPDATE OF c, s SKIP LOCKED
                """
        case .sqlite:
            // The single writer connection already excludes every other write.
            sql = """
                SELECT s.customer_id, s.environment, s.valid_until FROM customer_states s
                WHERE s.valid_until <= $1
                ORDER BY s.valid_until, s.customer_id, s.environment
                LIMIT $2
                """
        }
        return try rows(sql, SQLValue(now), SQLValue(limit)).map { row throws(StoreError) in
            let raw = try row.text(1)
            guard let environment = AppStoreEnvironment(rawValue: raw) else {
                throw StoreError(.corruptValue, "customer_states.environment holds an unknown environment")
            }
            return DueCustomerState(
                customerId: try row.integer(0), environment: environment,
                dueAt: Timestamp(millisecondsSince1970: try row.integer(2)))
        }
    }

    func postponeCustomerState(customerId: Int64, environment: AppStoreEnvironment, until: Timestamp) throws {
        _ = try execute(
            "UPDATE customer_states SET valid_until = $3 WHERE customer_id = $1 AND environment = $2",
            .integer(customerId), .text(environment.rawValue), SQLValue(until))
    }
}
