/// glibc's `malloc_trim`: hands freed heap pages back to the kernel. SQLite's page cache
/// frees into malloc, which otherwise keeps the memory of a large import resident for good.
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32

enum MemoryRelease {
    static func returnFreedMemory() {
        #if os(Linux)
        _ = glibcMallocTrim(0)
        #endif
    }
}
