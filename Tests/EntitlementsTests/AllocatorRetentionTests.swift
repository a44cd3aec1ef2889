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
        /// Page faults of one thread in each of 20 bursts of 8,000 blocks of 256 bytes (2 MB),
        /// each freed before the next, after 3 bursts of warm-up. With glibc's defaults the arena
        /// is trimmed after each burst and every burst faults about 500 pages in again (9,960 in
        /// 20, measured); kept, none. Counted per burst, with room for a few: in a full test run
        /// the thread may share its arena with another (glibc makes at most eight per core),
        /// whose blocks can push one burst onto pages not touched before.
        @Test func freedMemoryIsReusedWithoutPageFaults() {
            #expect(AllocatorRetention.apply(environment: [:]) == ["M_TOP_PAD", "M_MMAP_THRESHOLD"])
            let faultingBursts = Self.onOwnThread {
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
                var faulting = 0
                for _ in 0..<20 {
                    let before = Self.minorFaults()
                    burst()
                    if Self.minorFaults() - before > 50 { faulting += 1 }
                }
                return faulting
            }
            #expect(faultingBursts <= 5, "\(faultingBursts) of 20 bursts faulted their pages in again")
        }

        @Test func anOperatorsSettingIsLeftAsGiven() {
            #expect(
                AllocatorRetention.apply(environment: [
                    "MALLOC_TOP_PAD_": "131072", "GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=131072",
                ]) == [])
            #expect(
                AllocatorRetention.apply(environment: ["GLIBC_TUNABLES": "glibc.malloc.top_pad=0"])
                    == ["M_MMAP_THRESHOLD"])
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
