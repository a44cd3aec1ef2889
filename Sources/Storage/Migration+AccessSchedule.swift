extension Migration {
    /// An index on `customer_states.valid_until`, the instant of each state's next scheduled
    /// change (an expiry, a grace period's end): the access scheduler claims the rows that are
    /// due in that order (`claimDueCustomerStates`) instead of scanning every state.
    static let accessSchedule = Migration(
        identifier: "0005_access_schedule",
        sqlite: """
            CREATE INDEX customer_states_valid_until ON customer_states (valid_until);
            """,
        postgres: """
            CREATE INDEX customer_states_valid_until ON customer_states (valid_until);
            """)
}
