import Foundation
import Storage
import StorekeeperServer
import StorekeeperTesting
import Synchronization
import Testing

/// Issue 17's randomized acceptance run on PostgreSQL: 300 customers, events committed through
/// random instances, a real `storekeeper serve` process SIGKILLed while it delivers, three
/// in-process instances carrying on. Every event is delivered at least once, in order per
/// customer, never two requests of a customer at once, and the backlog is empty within 60 s
/// of the last commit.
@Suite(.serialized) struct WebhookInstancesKillTests {
    static let available = TestDatabase.postgresURL != nil && ServeProcess.binaryExists

    /// Answers slowly until the kill (so the process dies with requests in flight), then quickly.
    /// - Note: Thread-safe: behind a `Mutex`.
    final class Phase: Sendable {
        let killed = Mutex(false)
    }

    @Test(.enabled(if: available, "needs STOREKEEPER_TEST_POSTGRES_URL and the storekeeper binary"))
    func randomInstancesAndAKilledOneDeliverEverythingInOrder() async throws {
        var random = SplitMix64(seed: 17)
        let phase = Phase()
        let timeline = try WebhookTimeline { eventId, _ in
            if !phase.killed.withLock({ $0 }) { return .init(delay: .milliseconds(150)) }
            return .init(delay: .milliseconds(eventId.utf8.reduce(0) { ($0 + Int($1)) % 20 }))
        }
        let instances = try await DeliveryInstances.start(
            .postgres, count: 3, endpointURL: timeline.url,
            settings: DeliveryInstances.settings(timeout: .seconds(1), leaseMilliseconds: 6_000, batchSize: 4))

        // 300 customers with 2–4 events each, committed in order per customer.
        var plan: [String: [String]] = [:]
        for customer in 0..<300 {
            plan["c\(customer)"] = (0..<Int(2 + random.next() % 3)).map { "c\(customer)/\($0)" }
        }
        let expected = plan
        var process: ServeProcess?
        var workers: [Task<Void, Never>] = []
        var failure: (any Error)?
        var inFlightAtKill: [String] = []
        var drained = Duration.zero
        do {
            // First events of half the customers, before any instance delivers.
            for customer in 0..<150 {
                try await instances.commit(plan["c\(customer)"]!.removeFirst(), through: Int(random.next() % 3))
            }
            // The process that will be killed delivers alone first.
            let serving = try ServeProcess([
                "STOREKEEPER_DATABASE_URL": instances.database.url, "STOREKEEPER_LISTEN": "127.0.0.1:0",
                "STOREKEEPER_WEBHOOK_ALLOWED_DESTINATIONS": "127.0.0.1", "STOREKEEPER_WEBHOOK_TIMEOUT_SECONDS": "1",
                "STOREKEEPER_WEBHOOK_LEASE_SECONDS": "6", "STOREKEEPER_WEBHOOK_BATCH_SIZE": "4",
                "STOREKEEPER_WEBHOOK_POLL_MILLISECONDS": "50", "STOREKEEPER_ACCESS_SCHEDULER": "false",
                "STOREKEEPER_JOB_WORKER": "false", "STOREKEEPER_ACCESS_LOG": "false",
            ])
            process = serving
            let delivering = await DeliveryInstances.until(30) {
                timeline.requests.count >= 10 && timeline.inFlight > 0
            }
            #expect(delivering, "the process never delivered: \(serving.output)")
            serving.kill()
            inFlightAtKill = timeline.requests.filter { $0.end == nil }.map(\.eventId)
            phase.killed.withLock { $0 = true }
            #expect(serving.process.terminationReason == .uncaughtSignal)
            #expect(!inFlightAtKill.isEmpty, "killed between requests")

            // Three instances carry on while the rest is committed through random instances:
            // eight committers, each owning some customers (so each customer's events are
            // committed one after the other), interleaving them at random.
            workers = instances.run()
            let remaining = plan
            try await withThrowingTaskGroup(of: Void.self) { group in
                for committer in 0..<8 {
                    var own = remaining.filter { (Int($0.key.dropFirst()) ?? 0) % 8 == committer }
                    var generator = SplitMix64(seed: UInt64(committer))
                    group.addTask {
                        while let customer = own.keys.sorted().randomElement(using: &generator) {
                            guard let eventId = own[customer]?.first else {
                                own[customer] = nil
                                continue
                            }
                            own[customer]!.removeFirst()
                            try await instances.commit(eventId, through: Int(generator.next() % 3))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let lastCommit = ContinuousClock.now
            let empty = try await DeliveryInstances.until(60) {
                try await instances.backlog() == 0 && timeline.allSucceeded(expected)
            }
            drained = ContinuousClock.now - lastCommit
            #expect(empty, "backlog not empty 60 s after the last commit")
        } catch {
            failure = error
        }
        process?.close()
        await workers.stop()
        await instances.close()
        await timeline.stop()
        if let failure { throw failure }

        let requests = timeline.requests
        let events = expected.values.reduce(0) { $0 + $1.count }
        print(
            "\(events) events for 300 customers: \(requests.count) requests, killed with \(inFlightAtKill.count) in flight, drained \(drained) after the last commit"
        )
        #expect(timeline.allSucceeded(expected))
        #expect(timeline.orderViolations(expected) == [])
        #expect(timeline.overlaps().map { "\($0.0.eventId) & \($0.1.eventId)" } == [])
        // What the killed process was sending was never recorded: another instance sent it again.
        for eventId in inFlightAtKill {
            #expect(requests.filter { $0.eventId == eventId }.count >= 2, "\(eventId) was not sent again")
        }
    }
}

/// A small deterministic generator, so a failing run can be repeated.
struct SplitMix64: RandomNumberGenerator, Sendable {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
