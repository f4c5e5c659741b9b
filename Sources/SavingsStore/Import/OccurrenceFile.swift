import Foundation
import Glibc
import SavingsCore

/// An `OccurrenceCounter`'s table in a file with no name beside the database (gone when
/// closed, whatever ends the import), read and written a slot at a time: an import of many
/// millions of rows without an external_id counts them in flat memory, the kernel's page
/// cache holding what is hot.
final class OccurrenceFile: OccurrenceSlots {
    private let descriptor: Int32
    let count: Int

    init(count: Int, directory: String) throws {
        let fd = try NamelessFile.open(in: directory, purpose: "the import cannot keep its count of identical rows")
        guard ftruncate(fd, off_t(count * 16)) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw DomainError(.storageError, "the import cannot keep its count of identical rows: \(reason)")
        }
        descriptor = fd
        self.count = count
    }

    deinit { Glibc.close(descriptor) }

    /// Whether a table of `count` slots goes to a file rather than memory (16 MiB of keys and
    /// more: a file of about 1.5 million rows without an external_id).
    static func wanted(for count: Int) -> Bool { count >= 1 << 21 }

    /// Slots read ahead: a probe walks forward from a key's home slot, so one read serves it.
    private var window: [UInt64] = []
    private var windowStart = -1
    static let windowSlots = 32

    func key(_ index: Int) throws -> UInt64 {
        if windowStart < 0 || index < windowStart || index >= windowStart + window.count / 2 {
            let slots = min(Self.windowSlots, count - index)
            window = [UInt64](repeating: 0, count: slots * 2)
            let got = window.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, slots * 16, off_t(index * 16)) }
            guard got == slots * 16 else { throw failure() }
            windowStart = index
        }
        return window[(index - windowStart) * 2]
    }

    func count(_ index: Int) throws -> UInt64 { try word(at: index * 16 + 8) }

    private func word(at offset: Int) throws -> UInt64 {
        var value: UInt64 = 0
        let got = withUnsafeMutableBytes(of: &value) { pread(descriptor, $0.baseAddress, 8, off_t(offset)) }
        guard got == 8 else { throw failure() }
        return value
    }

    func write(_ index: Int, key: UInt64, count: UInt64) throws {
        if windowStart >= 0, index >= windowStart, index < windowStart + window.count / 2 {
            window[(index - windowStart) * 2] = key
            window[(index - windowStart) * 2 + 1] = count
        }
        var slot = (key, count)
        try withUnsafeBytes(of: &slot) { try transfer(pwrite(descriptor, $0.baseAddress, 16, off_t(index * 16))) }
    }

    func forEachUsed(_ body: (UInt64, UInt64) throws -> Void) throws {
        let block = 4096
        var buffer = [UInt64](repeating: 0, count: block * 2)
        var first = 0
        while first < count {
            let slots = min(block, count - first)
            let got = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, slots * 16, off_t(first * 16)) }
            guard got == slots * 16 else { throw failure() }
            for index in 0..<slots where buffer[index * 2] != 0 { try body(buffer[index * 2], buffer[index * 2 + 1]) }
            first += slots
        }
    }

    private func transfer(_ result: Int) throws {
        guard result == 16 else { throw failure() }
    }

    private func failure() -> DomainError {
        DomainError(.storageError, "the import's count of identical rows could not be kept: \(String(cString: strerror(errno)))")
    }
}
