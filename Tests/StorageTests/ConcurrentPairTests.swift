import Foundation
import Synchronization
import Testing

@testable import StorekeeperIngestion

/// The two computations of a re-evaluation side by side: both done when it returns, the
/// background one on another thread, and never left running when the calling side throws.
@Suite struct ConcurrentPairTests {
    struct Failure: Error {}

    @Test func bothRunOnTwoThreadsOrInTurn() {
        let caller = pthread_self()
        for inParallel in [true, false] {
            let (background, here) = ConcurrentPair.run(
                inParallel: inParallel, background: { (pthread_self(), 6) }, here: { (pthread_self(), 7) })
            #expect(background.1 == 6 && here.1 == 7)
            #expect(pthread_equal(here.0, caller) != 0)
            #expect((pthread_equal(background.0, caller) == 0) == inParallel)
        }
    }

    @Test func aThrowingSideWaitsForTheOther() {
        let finished = Atomic<Int>(0)
        #expect(throws: Failure.self) {
            _ = try ConcurrentPair.run(
                inParallel: true,
                background: {
                    Thread.sleep(forTimeInterval: 0.2)
                    finished.store(1, ordering: .sequentiallyConsistent)
                    return 1
                },
                here: { () throws -> Int in throw Failure() })
        }
        #expect(finished.load(ordering: .sequentiallyConsistent) == 1)
    }

    /// More callers at once than background threads (one here): jobs queue and every caller
    /// gets its own answer, none lost, none swapped.
    @Test func moreCallersThanThreadsEachGetTheirOwn() async {
        let threads = BackgroundThreads(count: 1)
        let wrong = Atomic<Int>(0)
        let finished = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { caller in
            for round in 0..<100 {
                let (background, here) = ConcurrentPair.run(
                    inParallel: true, on: threads, background: { caller * 1_000 + round }, here: { round })
                if background != caller * 1_000 + round || here != round { wrong.add(1, ordering: .relaxed) }
                finished.add(1, ordering: .relaxed)
            }
        }
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect(finished.load(ordering: .relaxed) == 800)
    }
}
