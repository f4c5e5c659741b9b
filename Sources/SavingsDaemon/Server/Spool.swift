import Foundation
import Glibc
import SavingsCore
import SavingsStore

/// A file with no name in the daemon's state directory, holding a transfer's bytes: an upload
/// while it arrives (imported once complete, so a slow client never holds the database's write
/// lock), or a download taken from one snapshot before it is sent. It has no name from the
/// moment it exists (`O_TMPFILE`, or unlinked at once where the file system lacks it), so it
/// vanishes when closed, whatever ends the request: an answer, a client gone, a `kill -9`.
final class Spool: @unchecked Sendable {
    let descriptor: Int32
    private(set) var size = 0

    /// A new empty spool in `directory`.
    init(directory: String) throws {
        descriptor = try NamelessFile.open(in: directory, purpose: "the daemon cannot hold the transfer")
    }

    /// An existing file's bytes (a backup copy); the spool takes its descriptor and removes the name.
    init(adopting path: String) throws {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        let failure = errno
        unlink(path)
        guard fd >= 0 else {
            throw DomainError(.storageError, "the daemon cannot read the transfer: \(String(cString: strerror(failure)))")
        }
        descriptor = fd
        var info = stat()
        size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
    }

    deinit { Glibc.close(descriptor) }

    /// Appends `bytes`; a full disk is the caller's `storage_error`, not a partial file.
    func append(_ bytes: Data) throws {
        try bytes.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                let written = pwrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset, off_t(size + offset))
                if written < 0 {
                    if errno == EINTR { continue }
                    let reason = errno == ENOSPC || errno == EDQUOT ? "it does not fit on the daemon's disk" : String(cString: strerror(errno))
                    throw DomainError(.storageError, "the transfer could not be held: \(reason)")
                }
                offset += written
            }
        }
        size += bytes.count
    }

    /// Up to `count` bytes from `offset`; empty at the end.
    func read(at offset: Int, count: Int) throws -> Data {
        var data = Data(count: count)
        let got = data.withUnsafeMutableBytes { buffer -> Int in
            while true {
                let n = pread(descriptor, buffer.baseAddress!, count, off_t(offset))
                if n < 0, errno == EINTR { continue }
                return n
            }
        }
        guard got >= 0 else { throw DomainError(.storageError, "the transfer could not be read: \(String(cString: strerror(errno)))") }
        data.count = got
        return data
    }

    /// A handle reading the spool from its start, independent of this object's lifetime.
    func reader() throws -> FileHandle { try handle(at: 0) }

    /// A handle appending to the spool (a writer that only knows handles); `refreshSize()` after.
    func writer() throws -> FileHandle { try handle(at: size) }

    /// The size after writing through `writer()`.
    func refreshSize() {
        var info = stat()
        if fstat(descriptor, &info) == 0 { size = Int(info.st_size) }
    }

    private func handle(at offset: Int) throws -> FileHandle {
        let copy = dup(descriptor)
        guard copy >= 0, lseek(copy, off_t(offset), SEEK_SET) == off_t(offset) else {
            if copy >= 0 { Glibc.close(copy) }
            throw DomainError(.storageError, "the transfer could not be opened: \(String(cString: strerror(errno)))")
        }
        return FileHandle(fileDescriptor: copy, closeOnDealloc: true)
    }

    /// The whole content (documents read in one piece, within their own size bound).
    func contents() throws -> Data { try read(at: 0, count: size) }
}
