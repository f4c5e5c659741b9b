/// glibc's `malloc_trim`: hands freed heap pages back to the kernel. SQLite's page cache
/// frees into malloc, which otherwise keeps the memory of a large import resident for good.
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32

@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32

public enum MemoryRelease {
    public static func returnFreedMemory() {
        #if os(Linux)
        _ = glibcMallocTrim(0)
        #endif
    }

    /// Fixed thresholds for glibc's allocator, set once at start-up. By default glibc raises
    /// both after a large block is freed (up to 32 MiB for the trim threshold), and the
    /// per-thread heaps then keep that much free memory each after one large request, which
    /// `malloc_trim` does not give back. With fixed values, blocks of 1 MiB and more are mapped
    /// on their own and unmapped when freed, and a heap's free top beyond 1 MiB is returned.
    public static func fixAllocatorThresholds() {
        #if os(Linux)
        let trimThreshold: Int32 = -1, mmapThreshold: Int32 = -3  // M_TRIM_THRESHOLD, M_MMAP_THRESHOLD (malloc.h)
        _ = glibcMallopt(mmapThreshold, 1 << 20)
        _ = glibcMallopt(trimThreshold, 1 << 20)
        #endif
    }
}
