#if canImport(Glibc)
import Glibc
#endif

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

extension MemoryRelease {
    /// Unmaps the resident pages of the program's and its libraries' read-only file mappings
    /// (code and constants) that hold no private copy, and returns how many bytes that was.
    ///
    /// Called once when the daemon is quiet after start-up: argument parsing, configuration,
    /// migrations and the start-up month work run once, yet their code pages would stay mapped
    /// for the life of the process. The pages stay in the page cache; code that runs again maps
    /// them back with a minor fault. Only mappings that cannot be written and hold no anonymous
    /// (copied-on-write) page are touched, so nothing but clean file pages is dropped.
    @discardableResult
    public static func releaseStartUpCode() -> Int {
        #if os(Linux)
        guard let smaps = readProcFile("/proc/self/smaps") else { return 0 }
        var released = 0
        for mapping in ReadOnlyFileMapping.parse(smaps) where mapping.droppable {
            guard let start = UnsafeMutableRawPointer(bitPattern: mapping.start) else { continue }
            if madvise(start, mapping.end - mapping.start, MADV_DONTNEED) == 0 {
                released += mapping.residentKB * 1024
            }
        }
        return released
        #else
        return 0
        #endif
    }

    /// The whole of a file under /proc, read until its end: such files report a size of 0
    /// and come in pieces.
    static func readProcFile(_ path: String) -> String? {
        #if os(Linux)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
        #else
        return nil
        #endif
    }
}

/// One mapping of `/proc/PID/smaps`, with what decides whether its pages can be dropped.
struct ReadOnlyFileMapping: Equatable {
    var start: Int
    var end: Int
    var permissions: Substring
    var inode: Substring
    var residentKB = 0
    var anonymousKB = 0
    var lockedKB = 0

    /// Readable, not writable, private, backed by a file, resident, and with no private copy
    /// of any page and nothing locked.
    var droppable: Bool {
        let flags = Array(permissions.utf8)
        return flags.count == 4 && flags[0] == UInt8(ascii: "r") && flags[1] == UInt8(ascii: "-")
            && flags[3] == UInt8(ascii: "p") && inode != "0"
            && residentKB > 0 && anonymousKB == 0 && lockedKB == 0
    }

    static func parse(_ smaps: String) -> [ReadOnlyFileMapping] {
        var mappings: [ReadOnlyFileMapping] = []
        for line in smaps.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.hasSuffix(":") {
                guard !mappings.isEmpty, fields.count >= 2, let value = Int(fields[1]) else { continue }
                switch first {
                case "Rss:": mappings[mappings.count - 1].residentKB = value
                case "Anonymous:": mappings[mappings.count - 1].anonymousKB = value
                case "Locked:": mappings[mappings.count - 1].lockedKB = value
                default: break
                }
            } else if fields.count >= 5, let dash = first.firstIndex(of: "-"),
                      let start = Int(first[..<dash], radix: 16),
                      let end = Int(first[first.index(after: dash)...], radix: 16) {
                mappings.append(ReadOnlyFileMapping(start: start, end: end, permissions: fields[1], inode: fields[4]))
            }
        }
        return mappings
    }
}
