import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting

@testable import Storage

/// The storage tests' name for the shared workload, plus what only tests need.
typealias IngestionFixture = IngestionWorkload

extension IngestionWorkload {
    /// Row counts of every table, to show that something changed nothing.
    static func snapshot(_ store: any Store) async throws -> [String: Int64] {
        try await store.read { reader in
            var counts: [String: Int64] = [:]
            for table in [
                "apps", "customers", "customer_transactions", "signed_transactions", "signed_renewal_infos",
                "notifications", "customer_states", "lifecycle_events", "webhook_outbox", "jobs", "audit_log",
                "jws_headers",
            ] {
                counts[table] = try reader.count(table)
            }
            counts["state_versions"] = try reader.sql("SELECT COALESCE(SUM(version), 0) FROM customer_states")[0]
                .integer(0)
            counts["last_seen"] = try reader.sql("SELECT COALESCE(SUM(last_seen_at), 0) FROM customers")[0].integer(0)
            return counts
        }
    }
}
