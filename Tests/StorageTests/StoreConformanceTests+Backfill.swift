import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionWorkload

/// The receipt backfill's record (migration `0013_backfill`) on both engines: a line is
/// recorded once per app, and a line rolled back with its transaction is not recorded.
extension StoreConformanceTests {
    @Test("backfill lines recorded once per app; a rollback leaves none", arguments: Backend.enabled)
    func backfillLines(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let other = {
                var app = F.app
                app.id = F.appId + "-other"
                return app
            }()
            try await store.write { (tx) throws in
                _ = try tx.insertApp(F.app, at: F.at(0))
                _ = try tx.insertApp(other, at: F.at(0))
                #expect(try tx.recordBackfillLine(appId: F.appId, lineDigest: "d1", appUserId: "alice", at: F.at(1)))
                #expect(
                    try tx.recordBackfillLine(appId: F.appId, lineDigest: "d1", appUserId: "bob", at: F.at(2)) == false)
                #expect(try tx.recordBackfillLine(appId: other.id, lineDigest: "d1", appUserId: "alice", at: F.at(2)))
            }
            struct Abort: Error {}
            await #expect(throws: Abort.self) {
                try await store.write { (tx) throws in
                    _ = try tx.recordBackfillLine(appId: F.appId, lineDigest: "d2", appUserId: "carol", at: F.at(3))
                    throw Abort()
                }
            }
            try await store.read { (reader) throws in
                #expect(try reader.backfillLineImported(appId: F.appId, lineDigest: "d1"))
                #expect(try reader.backfillLineImported(appId: F.appId, lineDigest: "d2") == false)
                #expect(try reader.backfillLineCount(appId: F.appId) == 1)
                #expect(try reader.backfillLineCount(appId: other.id) == 1)
                #expect(try reader.receiptValidationCount(appId: F.appId) == 0)
            }
        }
    }
}
