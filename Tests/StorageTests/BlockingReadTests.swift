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

    /// A pool of two workers, both held: a third caller waits (it has not run while both are
    /// held), runs on the worker the first release hands it, and a caller still waiting when
    /// the pool closes gets `closed`.
    @Test(
        "a blocking caller waits for a held pool, takes the released worker, and hears a close",
        .timeLimit(.minutes(1)))
    func blockingCallerWaits() async throws {
        let workers = (0..<2).map { index in
            ConnectionWorker(label: "test.pool.\(index)") { () throws(StoreError) in
                try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeoutMilliseconds: 1000)
            }
        }
        let pool = ConnectionPool(workers: workers)
        let held = DispatchSemaphore(value: 0)
        let release = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let holders = (0..<2).map { index in
            Task {
                try await Self.onThread { () throws -> ObjectIdentifier in
                    try pool.withWorkerBlocking { worker -> ObjectIdentifier in
                        held.signal()
                        release[index].wait()
                        return ObjectIdentifier(worker)
                    }
                }
            }
        }
        // Waited for on a thread of its own: never block the cooperative pool the holders need.
        try await Self.onThread {
            held.wait()
            held.wait()
        }
        let ran = Mutex(false)
        let waiter = Task {
            try await Self.onThread { () throws -> ObjectIdentifier in
                try pool.withWorkerBlocking { worker -> ObjectIdentifier in
                    ran.withLock { $0 = true }
                    return ObjectIdentifier(worker)
                }
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        let ranEarly = ran.withLock { $0 }
        #expect(!ranEarly)
        release[0].signal()
        let first = try await holders[0].value
        let handedOn = try await waiter.value
        #expect(handedOn == first)

        // Both held again (the second still is): a waiter is woken by the close with `closed`.
        let rehold = Task {
            try await Self.onThread { () throws -> Int in
                try pool.withWorkerBlocking { _ -> Int in
                    held.signal()
                    release[0].wait()
                    return 0
                }
            }
        }
        try await Self.onThread { held.wait() }
        let closedWaiter = Task { () -> StoreError.Code? in
            do {
                _ = try await Self.onThread { try pool.withWorkerBlocking { _ in 1 } }
                return nil
            } catch let error as StoreError {
                return error.code
            } catch {
                return nil
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        let closing = Task { await pool.close() }
        let closedCode = await closedWaiter.value
        #expect(closedCode == .closed)
        release[0].signal()
        release[1].signal()
        _ = try await rehold.value
        _ = try await holders[1].value
        await closing.value
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
