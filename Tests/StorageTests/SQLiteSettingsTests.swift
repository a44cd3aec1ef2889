import CSQLite
import Testing

@testable import Storage

/// The settings every SQLite connection runs with.
@Suite struct SQLiteSettingsTests {
    /// SQLite's memory statistics are off for the process (their mutex serialized every
    /// allocation of concurrent readers): the counter they keep stays at zero.
    @Test func memoryStatisticsAreOff() async throws {
        try await withStore(.sqlite) { store, _ in
            _ = try await store.read { reader in try reader.customerIds(appId: "none") }
            #expect(SQLiteConnection.memoryStatisticsSetting == SQLITE_OK)
            #expect(SQLiteConnection.trackedMemory == 0)
        }
    }

    @Test("writes are durable at commit; the writer caches 64 MiB of pages and each reader 16 MiB")
    func connectionSettings() async throws {
        try await withStore(.sqlite) { store, _ in
            let writer = try await store.write { tx in
                try ["synchronous", "journal_mode", "cache_size", "foreign_keys"].map {
                    try (tx as! SQLStoreTransaction).connection.query("PRAGMA \($0)", []).first?.text(0)
                }
            }
            #expect(writer == ["2", "wal", "-65536", "1"])
            let reader = try await store.read { reader in
                try (reader as! SQLStoreTransaction).connection.query("PRAGMA cache_size", []).first?.text(0)
            }
            #expect(reader == "-16384")
        }
    }
}
