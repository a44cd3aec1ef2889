import Foundation
import StorekeeperIngestion
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `AllocatorRetention`: memory freed by an evaluation-shaped burst of allocations (many small
/// blocks, as Swift's arrays, strings and boxes are) serves the next burst without the kernel
/// faulting its pages in again.
@Suite struct AllocatorRetentionTests {
    #if canImport(Glibc)
        /// Page faults of one thread over 20 bursts of 8,000 blocks of 256 bytes (2 MB), each
        /// freed before the next, after 3 bursts of warm-up. With glibc's defaults the arena is
        /// trimmed after each burst and the next faults its pages in again (about 10,000 faults;
        /// measured); kept, none.
        @Test func freedMemoryIsReusedWithoutPageFaults() {
            AllocatorRetention.apply(environment: [:])
            let faults = Self.onOwnThread {
                let blocks = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 8_000)
                defer { blocks.deallocate() }
                func burst() {
                    for index in 0..<8_000 {
                        let block = malloc(256)!
                        memset(block, 1, 256)
                        blocks[index] = block
                    }
                    for index in 0..<8_000 { free(blocks[index]) }
                }
                for _ in 0..<3 { burst() }
                let before = Self.minorFaults()
                for _ in 0..<20 { burst() }
                return Self.minorFaults() - before
            }
            #expect(faults < 200, "\(faults) page faults over 20 bursts: freed memory went back to the kernel")
        }

        static func minorFaults() -> Int {
            var usage = rusage()
            // RUSAGE_THREAD (1): this thread's alone; Linux's, which the Glibc module leaves out.
            getrusage(__rusage_who_t(1), &usage)
            return usage.ru_minflt
        }

        /// Runs `body` on a thread of its own (its own arena, as the writer's and the
        /// background threads are) and returns its result.
        static func onOwnThread(_ body: @escaping @Sendable () -> Int) -> Int {
            let done = DispatchSemaphore(value: 0)
            let result = Mutex(0)
            let thread = Thread {
                let value = body()
                result.withLock { $0 = value }
                done.signal()
            }
            thread.start()
            done.wait()
            return result.withLock { $0 }
        }
    #endif
}
