import AppStoreModels
import Foundation
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// A write whose body swallowed a failed statement must not be acknowledged: PostgreSQL turns
/// the `COMMIT` of an aborted transaction into a rollback while reporting success.
@Suite("Aborted commits")
struct AbortedCommitTests {
    @Test("COMMIT of an aborted PostgreSQL transaction throws", arguments: Backend.enabled.filter { $0 == .postgres })
    func abortedCommitThrows(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            do {
                _ = try await store.write { tx -> Int in
                    _ = try tx.ensureCustomer(appId: F.appId, appUserId: "other", at: F.at(2))
                    // The body catches a failed statement and carries on, as it must not.
                    do { _ = try tx.sql("SELECT 1 / 0") } catch {}
                    return 1
                }
                Issue.record("a write whose transaction was aborted reported success")
            } catch let error as StoreError {
                #expect(error.code == .database)
                #expect(error.description.contains("rolled back at COMMIT"))
            }
            let other = try await store.read { try $0.customer(appId: F.appId, .appUserId("other")) }
            #expect(other == nil)
        }
    }
}
