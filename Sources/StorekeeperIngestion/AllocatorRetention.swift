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
/// evaluation faulted every page in again, zero-filled by the kernel: 30,000 to 55,000 page
/// faults in 200 to 300 evaluations of a 1,000-fact customer, about 10% of an evaluation's CPU
/// time (`perf stat`, `BENCH_ONLY=worstcase`). Kept, the same memory serves the next one.
///
/// The cost is bounded: an arena keeps at most `topPad` free above what it uses (glibc makes at
/// most eight arenas per core), and blocks below `mmapThreshold` come from arenas rather than
/// from maps of their own (glibc's own dynamic threshold rises that far anyway as large blocks
/// are freed).
public enum AllocatorRetention {
    /// Free memory an arena keeps at its top when it trims (`M_TOP_PAD`).
    public static let topPad = 8 << 20
    /// Blocks at least this large get a map of their own (`M_MMAP_THRESHOLD`): glibc's
    /// largest dynamic threshold on 64-bit.
    public static let mmapThreshold = 32 << 20

    /// Applies both settings once per process, before the threads that allocate start. A
    /// setting the operator gave glibc (`MALLOC_TOP_PAD_`, `MALLOC_MMAP_THRESHOLD_`, or the
    /// tunables `glibc.malloc.top_pad`, `glibc.malloc.mmap_threshold` in `GLIBC_TUNABLES`) is
    /// left as given. Returns the settings made; one glibc refuses (a build or tunable that
    /// bounds it lower) is left at glibc's default: it is an optimisation, not a requirement.
    @discardableResult
    public static func apply(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var applied: [String] = []
        #if canImport(Glibc)
            let tunables = environment["GLIBC_TUNABLES"] ?? ""
            if environment["MALLOC_TOP_PAD_"] == nil, !tunables.contains("glibc.malloc.top_pad"),
                mallopt(M_TOP_PAD, Int32(topPad)) == 1
            {
                applied.append("M_TOP_PAD")
            }
            if environment["MALLOC_MMAP_THRESHOLD_"] == nil, !tunables.contains("glibc.malloc.mmap_threshold"),
                mallopt(M_MMAP_THRESHOLD, Int32(mmapThreshold)) == 1
            {
                applied.append("M_MMAP_THRESHOLD")
            }
        #endif
        return applied
    }
}
