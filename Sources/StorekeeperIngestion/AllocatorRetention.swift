import Foundation

#if canImport(Glibc)
    import CMalloc
#endif

/// Makes glibc's allocator keep memory it has freed for reuse instead of handing it back to
/// the kernel at once.
///
/// An evaluation of a long history builds and frees arrays and tables of a few hundred
/// kilobytes to a few megabytes, on the writer's and the background threads' arenas. With
/// glibc's defaults each free trimmed the arena's top back (`madvise`/`munmap`) and the next
/// evaluation faulted every page in again, zero-filled by the kernel: 30,000 to 40,000 page
/// faults in 200 evaluations of a 1,000-fact customer, about 12% of the ingestion's CPU time
/// (`perf stat`, `BENCH_ONLY=worstcase`). Kept, the same memory serves the next evaluation.
///
/// The cost is bounded: an arena keeps at most `topPad` free above what it uses, and blocks
/// below `mmapThreshold` come from arenas rather than from maps of their own (glibc's own
/// dynamic threshold rises that far anyway as large blocks are freed).
public enum AllocatorRetention {
    /// Free memory an arena keeps at its top when it trims (`M_TOP_PAD`).
    public static let topPad = 8 << 20
    /// Blocks at least this large get a map of their own (`M_MMAP_THRESHOLD`): glibc's
    /// largest dynamic threshold on 64-bit.
    public static let mmapThreshold = 32 << 20

    /// Applies both settings once per process, before the threads that allocate start. A
    /// setting the operator gave glibc in its own environment variable (`MALLOC_TOP_PAD_`,
    /// `MALLOC_MMAP_THRESHOLD_`) is left as given.
    public static func apply(environment: [String: String] = ProcessInfo.processInfo.environment) {
        #if canImport(Glibc)
            if environment["MALLOC_TOP_PAD_"] == nil {
                precondition(mallopt(M_TOP_PAD, Int32(topPad)) == 1, "mallopt(M_TOP_PAD) refused")
            }
            if environment["MALLOC_MMAP_THRESHOLD_"] == nil {
                precondition(mallopt(M_MMAP_THRESHOLD, Int32(mmapThreshold)) == 1, "mallopt(M_MMAP_THRESHOLD) refused")
            }
        #endif
    }
}
