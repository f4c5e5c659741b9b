#if os(Linux)
import Glibc
import Testing
@testable import SavingsStore

@Suite struct MemoryReleaseTests {
    @Test func readsMappingsAndWhatDecidesTheirDrop() {
        let smaps = """
        55d0c0000000-55d0c1000000 r-xp 00000000 fe:00 5352556                    /usr/bin/savingsd
        Size:              16384 kB
        Rss:               10492 kB
        Anonymous:             0 kB
        Locked:                0 kB
        VmFlags: rd ex mr mw me
        55d0c1000000-55d0c1100000 r--p 01000000 fe:00 5352556                    /usr/bin/savingsd
        Rss:                 576 kB
        Anonymous:           576 kB
        Locked:                0 kB
        55d0c1100000-55d0c1200000 rw-p 01100000 fe:00 5352556                    /usr/bin/savingsd
        Rss:                 876 kB
        Anonymous:            52 kB
        Locked:                0 kB
        7f0000000000-7f0000100000 r--s 00000000 fe:00 77                         /var/lib/savingsd/savings.db-shm
        Rss:                  32 kB
        Anonymous:             0 kB
        Locked:                0 kB
        7f0000100000-7f0000200000 r--p 00000000 00:00 0 
        Rss:                   8 kB
        Anonymous:             8 kB
        Locked:                0 kB
        7f0000200000-7f0000300000 r-xp 00000000 fe:00 2268                       /usr/lib/libswiftCore.so
        Rss:                4672 kB
        Anonymous:             0 kB
        Locked:              128 kB
        7f0000300000-7f0000400000 r-xp 00000000 fe:00 2269                       /usr/lib/libother.so
        Rss:                   0 kB
        Anonymous:             0 kB
        Locked:                0 kB
        """
        let mappings = ReadOnlyFileMapping.parse(smaps)
        #expect(mappings.count == 7)
        #expect(mappings[0] == ReadOnlyFileMapping(start: 0x55d0_c000_0000, end: 0x55d0_c100_0000, permissions: "r-xp",
                                                   inode: "5352556", residentKB: 10492, anonymousKB: 0, lockedKB: 0))
        // Only the clean code of the program: the relocated constants, the writable data, the
        // shared database index, anonymous memory, locked pages and empty mappings stay.
        #expect(mappings.map(\.droppable) == [true, false, false, false, false, false, false])
    }

    /// On real mappings of this process: a clean read-only private mapping of a file loses its
    /// resident pages; a read-only one holding a page changed before it was made read-only keeps
    /// that page and its content; both still read what they held.
    @Test func dropsCleanPagesAndKeepsChangedOnes() throws {
        let path = "/tmp/savings-memory-release-\(getpid())"
        let size = 64 * 4096
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        defer { close(descriptor); unlink(path) }
        let content = [UInt8](repeating: 7, count: size)
        try #require(content.withUnsafeBytes { write(descriptor, $0.baseAddress, size) } == size)

        let clean = try #require(mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0))
        let changed = try #require(mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, descriptor, 0))
        defer { munmap(clean, size); munmap(changed, size) }
        var sum = 0
        for offset in stride(from: 0, to: size, by: 4096) { sum += Int(clean.load(fromByteOffset: offset, as: UInt8.self)) }
        changed.storeBytes(of: 42, toByteOffset: 4096, as: UInt8.self)
        try #require(mprotect(changed, size, PROT_READ) == 0)
        #expect(sum == 7 * 64)

        func mapping(at address: UnsafeMutableRawPointer) throws -> ReadOnlyFileMapping {
            let smaps = try #require(MemoryRelease.readProcFile("/proc/self/smaps"))
            return try #require(ReadOnlyFileMapping.parse(smaps).first { $0.start == Int(bitPattern: address) })
        }
        #expect(try mapping(at: clean).residentKB == 256)
        #expect(try mapping(at: changed).anonymousKB > 0)

        #expect(MemoryRelease.releaseStartUpCode() >= 256 * 1024)
        #expect(try mapping(at: clean).residentKB == 0)
        #expect(try mapping(at: changed).anonymousKB > 0)
        #expect(changed.load(fromByteOffset: 4096, as: UInt8.self) == 42)
        #expect(changed.load(fromByteOffset: 0, as: UInt8.self) == 7)
        #expect(clean.load(fromByteOffset: 8192, as: UInt8.self) == 7)
    }
}
#endif
