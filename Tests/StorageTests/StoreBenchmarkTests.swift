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
