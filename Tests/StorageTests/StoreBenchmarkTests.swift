import Foundation
import Testing

@testable import Storage
@testable import StorekeeperBench

/// Keeps the benchmark compiling and honest at a tiny size; `make bench` runs it large.
@Suite("Store benchmark")
struct StoreBenchmarkTests {
    @Test("a small run produces figures", arguments: Backend.enabled)
    func smallRun(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let result = try await StoreBenchmark.run(
                store: store, transactions: 400, customers: 100, lookups: 200, commits: 50, concurrency: 4,
                customersPerCommit: 50)
            #expect(result.transactions == 400)
            #expect(result.lookupP50Microseconds > 0)
            #expect(result.lookupP99Microseconds >= result.lookupP50Microseconds)
            #expect(try await store.read { try $0.count("signed_transactions") } == 450)
            print(result)
        }
    }
}

@Suite("Write-ahead log commits")
struct WriteAheadLogCommitsTests {
    /// A log of `frames` (commit flag, salts) with 512-byte pages.
    static func log(_ frames: [(commit: Bool, salts: (UInt32, UInt32))]) -> [UInt8] {
        func word(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        var bytes = word(0x377F_0682) + word(3_007_000) + word(512) + word(0) + word(7) + word(9) + word(0) + word(0)
        for (index, frame) in frames.enumerated() {
            bytes += word(UInt32(index + 1)) + word(frame.commit ? 10 : 0) + word(frame.salts.0) + word(frame.salts.1)
            bytes += word(0) + word(0) + [UInt8](repeating: 0, count: 512)
        }
        return bytes
    }

    @Test("frames are counted per commit, up to the first frame left from before the log started over")
    func framesPerCommit() throws {
        let current = (UInt32(7), UInt32(9))
        let bytes = Self.log([
            (false, current), (true, current), (true, current), (false, current), (false, current),
            (true, current), (true, (7, 8)), (true, current),
        ])
        let commits = try WriteAheadLogCommits(bytes: bytes)
        #expect(commits.pageSize == 512)
        #expect(commits.frames == [2, 1, 3])
        #expect(commits.medianFrames(ofLast: 2) == 3)
        #expect(commits.medianFrames(ofLast: 3) == 2)
        // A commit cut short by the end of the file is not counted.
        let cut = Self.log([(false, current), (true, current), (false, current), (true, current)]).dropLast(100)
        #expect(try WriteAheadLogCommits(bytes: Array(cut)).frames == [2])
        #expect(throws: WriteAheadLogCommits.Failure.self) { try WriteAheadLogCommits(bytes: [0, 1, 2]) }
    }

    @Test("a store's own log: its last commit wrote the pages of the rows it added")
    func storeLog() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let store = try await SQLiteStore.open(path: path)
        let before = try WriteAheadLogCommits(path: path + "-wal").frames.count
        try await store.write { tx in
            // 64 rows of 4 KB texts: each takes a page of its own or more.
            _ = try (tx as! SQLStoreTransaction).execute("CREATE TABLE filler (text TEXT NOT NULL)")
            for index in 0..<64 {
                _ = try (tx as! SQLStoreTransaction).execute(
                    "INSERT INTO filler (text) VALUES ($1)", .text(String(repeating: "\(index % 10)", count: 4_000)))
            }
        }
        let after = try WriteAheadLogCommits(path: path + "-wal")
        #expect(after.pageSize == 4_096)
        #expect(after.frames.count == before + 1)
        #expect(after.frames.last.map { $0 >= 64 } == true)
        await store.close()
    }
}
