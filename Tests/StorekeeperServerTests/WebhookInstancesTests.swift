import Foundation
import Storage
import StorekeeperServer
import StorekeeperTesting
import Synchronization
import Testing

/// Issue 17: webhook delivery with several instances on one database. Each instance is a
/// deliverer with its own store (PostgreSQL) — or, for the kill, a real `storekeeper serve`
/// process — and the endpoint (`WebhookTimeline`) records when every request started and
/// ended: a customer's events arrive in commit order, never two at once, each at least once.
@Suite(.serialized) struct WebhookInstancesTests {
    /// The reproduction: the endpoint holds the customer's first request 3 s and answers
    /// 500; e2 is committed meanwhile, e3 after the 500. e1 is retried (1 s backoff), then e2
    /// and e3 in order, e2 within a second of e1's success, although batches are of one
    /// delivery (the queue is given back after each and may be claimed by any instance).
    @Test(arguments: DeliveryInstances.engines)
    func failedHeadIsRetriedThenTheRestFollowAtOnce(engine: StoreEngine) async throws {
        let timeline = try WebhookTimeline { eventId, earlier in
            eventId == "repro/1" && earlier == 0 ? .init(delay: .seconds(3), status: 500) : .init()
        }
        let instances = try await DeliveryInstances.start(
            engine, count: engine == .postgres ? 3 : 2, endpointURL: timeline.url,
            settings: DeliveryInstances.settings(timeout: .seconds(5), leaseMilliseconds: 18_000, batchSize: 1))
        let workers = instances.run()
        let expected = ["repro": ["repro/1", "repro/2", "repro/3"]]
        var failure: (any Error)?
        do {
            try await instances.commit("repro/1", through: 0)
            #expect(await DeliveryInstances.until(10) { timeline.requests.contains { $0.eventId == "repro/1" } })
            try await instances.commit("repro/2", through: 1)
            #expect(await DeliveryInstances.until(10) { timeline.requests.first?.end != nil })
            try await instances.commit("repro/3", through: instances.count - 1)
            #expect(await DeliveryInstances.until(20) { timeline.allSucceeded(expected) })
            #expect(try await DeliveryInstances.until(5) { try await instances.backlog() == 0 })
        } catch {
            failure = error
        }
        await workers.stop()
        await instances.close()
        await timeline.stop()
        if let failure { throw failure }

        let requests = timeline.requests.sorted { $0.start < $1.start }
        #expect(requests.map(\.eventId) == ["repro/1", "repro/1", "repro/2", "repro/3"])
        #expect(requests.map(\.status) == [500, 200, 200, 200])
        if requests.count == 4, let succeeded = requests[1].end {
            let gap = requests[2].start - succeeded
            print("e2 sent \(gap) after e1's success (\(engine), \(instances.count) instances)")
            #expect(gap < .seconds(1), "e2 waited \(gap) after e1's success")
        }
        #expect(timeline.orderViolations(expected) == [])
        #expect(timeline.overlaps().isEmpty)
    }

    /// The third defect: a customer's batch answered slowly (9 × 0.8 s, under the 1 s
    /// timeout) outlives the 6 s lease. The heartbeat keeps the lease, so no other instance
    /// sends any of it meanwhile: each event is sent exactly once, in order, never overlapping.
    @Test(arguments: DeliveryInstances.engines)
    func slowBatchOutlivingTheLeaseIsNeverSentTwiceAtOnce(engine: StoreEngine) async throws {
        let timeline = try WebhookTimeline { eventId, _ in
            eventId.hasPrefix("slow/") ? .init(delay: .milliseconds(800)) : .init()
        }
        let instances = try await DeliveryInstances.start(
            engine, count: engine == .postgres ? 3 : 2, endpointURL: timeline.url,
            settings: DeliveryInstances.settings(timeout: .seconds(1), leaseMilliseconds: 6_000, batchSize: 16))
        var expected: [String: [String]] = ["slow": [], "quick": []]
        for index in 0..<9 {
            for customer in ["slow", "quick"] where customer == "slow" || index < 5 {
                expected[customer]!.append("\(customer)/\(index)")
            }
        }
        var failure: (any Error)?
        var workers: [Task<Void, Never>] = []
        do {
            for (offset, eventId) in (expected["slow"]! + expected["quick"]!).enumerated() {
                try await instances.commit(eventId, through: offset)
            }
            workers = instances.run()
            #expect(await DeliveryInstances.until(30) { timeline.allSucceeded(expected) })
            #expect(try await DeliveryInstances.until(5) { try await instances.backlog() == 0 })
        } catch {
            failure = error
        }
        await workers.stop()
        await instances.close()
        await timeline.stop()
        if let failure { throw failure }

        let sent = timeline.requests.map(\.eventId)
        #expect(sent.sorted() == (expected["slow"]! + expected["quick"]!).sorted(), "each event exactly once")
        #expect(timeline.overlaps().map { "\($0.0.eventId) & \($0.1.eventId)" } == [])
        #expect(timeline.orderViolations(expected) == [])
    }

    /// 200 events for four customers through three instances are delivered about as fast as
    /// through one (within twice the time plus 2 s): no queue waits on an unrelated lease.
    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func threeInstancesDeliverAboutAsFastAsOne() async throws {
        var expected: [String: [String]] = [:]
        for customer in 0..<4 { expected["fast\(customer)"] = (0..<50).map { "fast\(customer)/\($0)" } }
        func deliverAll(instances count: Int) async throws -> Duration {
            let timeline = try WebhookTimeline { _, _ in .init() }
            let instances = try await DeliveryInstances.start(
                .postgres, count: count, endpointURL: timeline.url,
                settings: DeliveryInstances.settings(timeout: .seconds(2), leaseMilliseconds: 10_000, batchSize: 16))
            var failure: (any Error)?
            var workers: [Task<Void, Never>] = []
            var elapsed = Duration.zero
            do {
                // Committed in rounds across customers, each through the next instance.
                for index in 0..<50 {
                    for customer in 0..<4 { try await instances.commit("fast\(customer)/\(index)", through: index) }
                }
                let started = ContinuousClock.now
                workers = instances.run()
                #expect(await DeliveryInstances.until(60) { timeline.allSucceeded(expected) })
                elapsed = ContinuousClock.now - started
                #expect(try await DeliveryInstances.until(5) { try await instances.backlog() == 0 })
            } catch {
                failure = error
            }
            await workers.stop()
            await instances.close()
            await timeline.stop()
            if let failure { throw failure }
            #expect(timeline.overlaps().isEmpty)
            #expect(timeline.orderViolations(expected) == [])
            return elapsed
        }
        let one = try await deliverAll(instances: 1)
        let three = try await deliverAll(instances: 3)
        print("200 events, 4 customers: one instance \(one), three instances \(three)")
        #expect(three <= one * 2 + .seconds(2), "three instances took \(three), one took \(one)")
    }
}
