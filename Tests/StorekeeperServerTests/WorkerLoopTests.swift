import Foundation
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Synchronization
import Testing

/// The one run loop of the periodic workers, and the one place that starts and stops them all.
struct WorkerLoopTests {
    /// Records the rounds a loop ran and the sleeps it asked for.
    /// - Note: Thread-safe: behind a `Mutex`.
    final class Trace: Sendable {
        let events = Mutex<[String]>([])
        func add(_ event: String) { events.withLock { $0.append(event) } }
    }

    @Test func restsOnlyAfterARoundThatSaysRestAndStopsWhenCancelledWhileResting() async throws {
        let trace = Trace()
        // Sleeps return at once until the sixth, which waits for the cancellation.
        let clock = ServerClock(
            now: { TestSigning.signedDate },
            sleep: { duration in
                let count = trace.events.withLock { events in
                    events.append("sleep \(duration)")
                    return events.filter { $0.hasPrefix("sleep") }.count
                }
                if count >= 3 { try await Task.sleep(for: .seconds(600)) }
            })
        let loop = WorkerLoop(clock: clock, interval: .milliseconds(250))
        let answers: [WorkerRound] = [.again, .rest, .again, .again, .rest, .rest]
        let task = Task {
            var index = 0
            await loop.run {
                trace.add("round \(index)")
                defer { index += 1 }
                return index < answers.count ? answers[index] : .rest
            }
        }
        var asleep = false
        for _ in 0..<1000 where !asleep {
            try await Task.sleep(for: .milliseconds(5))
            asleep = trace.events.withLock { $0.filter { $0.hasPrefix("sleep") }.count } == 3
        }
        task.cancel()
        await task.value
        #expect(
            trace.events.withLock { $0 } == [
                "round 0", "round 1", "sleep 0.25 seconds", "round 2", "round 3", "round 4", "sleep 0.25 seconds",
                "round 5", "sleep 0.25 seconds",
            ])
    }

    @Test func aLoopCancelledBeforeItStartsRunsNoRound() async {
        let trace = Trace()
        let loop = WorkerLoop(clock: .system, interval: .seconds(60))
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            await loop.run {
                trace.add("round")
                return .rest
            }
        }
        task.cancel()
        await task.value
        #expect(trace.events.withLock { $0 }.isEmpty)
    }

    @Test func theApplicationStartsTheConfiguredWorkersInOrderAndStopsThemAll() async throws {
        let all = try await ServerHarness()
        #expect(
            all.application.configuredWorkers.map(\.name) == [
                "webhookDeliverer", "accessScheduler", "jobWorker", "analyticsRebuild", "historyReplay",
                "statusPolling", "playVoidedPolling", "playReread",
            ])
        let running = all.application.startWorkers()
        #expect(running.names == all.application.configuredWorkers.map(\.name))
        // Every loop ends promptly once stopped (each is resting or between rounds).
        let started = ContinuousClock.now
        await running.stop()
        #expect(ContinuousClock.now - started < .seconds(30))
        await all.stop()

        let some = try await ServerHarness(configure: { configuration in
            configuration.jobWorker = false
            configuration.historyReplay = false
            configuration.webhookWorker = false
            configuration.playVoidedPolling = false
            configuration.playReread = false
        })
        #expect(some.application.configuredWorkers.map(\.name) == ["accessScheduler", "statusPolling"])
        await some.application.startWorkers().stop()
        await some.stop()
    }
}
