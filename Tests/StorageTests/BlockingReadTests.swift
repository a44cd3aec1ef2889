import AppStoreModels
import Foundation
import Synchronization
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// `readBlocking`: the HTTP threads' read, on the calling thread, waiting for a free connection.
@Suite("Blocking reads")
struct BlockingReadTests {
    /// Runs `body` on a new OS thread (never the cooperative pool, as `readBlocking` requires).
    static func onThread<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    @Test("a blocking read sees what an async read sees, and waits for a busy pool", arguments: Backend.enabled)
    func blockingRead(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            _ = try await store.write { try $0.ensureCustomer(appId: F.appId, appUserId: "alice", at: F.at(1)) }
            let async = try await store.read { try $0.customer(appId: F.appId, .appUserId("alice")) }
            let blocking = try await Self.onThread {
                try store.readBlocking { try $0.customer(appId: F.appId, .appUserId("alice")) }
            }
            #expect(blocking == async)
            #expect(blocking?.appUserId == "alice")
            // Twenty threads at once on a pool of a few connections: each waits its turn.
            let names = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await Self.onThread {
                            try store.readBlocking { try $0.customer(appId: F.appId, .appUserId("alice"))?.appUserId }
                        }
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(names == Array(repeating: "alice", count: 20))
            let missing = try await Self.onThread {
                try store.readBlocking { try $0.customer(appId: F.appId, .appUserId("nobody")) }
            }
            #expect(missing == nil)
        }
    }

    @Test("a blocking read on a closed store throws closed", arguments: Backend.enabled)
    func closedStore(backend: Backend) async throws {
        let database = try await TestDatabase.make(backend)
        let store = try await database.open()
        await store.close()
        do {
            _ = try await Self.onThread { try store.readBlocking { try $0.apps().count } }
            Issue.record("a closed store answered a blocking read")
        } catch let error as StoreError {
            #expect(error.code == .closed)
        }
        await database.drop()
    }
}
