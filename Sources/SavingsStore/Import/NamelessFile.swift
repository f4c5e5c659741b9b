import Foundation
import Glibc
import SavingsCore

/// Files with no name beside the database: a transfer's bytes (the daemon's spool), an import's
/// count of identical rows. Gone when closed, whatever ends their work, `kill -9` included.
public enum NamelessFile {
    /// The name one has for an instant where the file system lacks `O_TMPFILE`, and a download's
    /// backup copy until it is opened; swept at start.
    public static let namePrefix = ".savingsd-transfer-"

    /// A new empty file in `directory`, open for reading and writing; `purpose` says in the
    /// error what could not be kept.
    public static func open(in directory: String, purpose: String) throws -> Int32 {
        // O_TMPFILE is (__O_TMPFILE | O_DIRECTORY); the C macro is not visible from Swift.
        var fd = Glibc.open(directory, 0o20000000 | O_DIRECTORY | O_RDWR | O_CLOEXEC, 0o600)
        if fd < 0 {
            var template = Array((directory + "/" + namePrefix + "XXXXXX").utf8CString)
            fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            if fd >= 0 { template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) } }
        }
        guard fd >= 0 else { throw DomainError(.storageError, "\(purpose): \(String(cString: strerror(errno)))") }
        return fd
    }

    /// Removes what an earlier run left under a transfer's name (a download's backup copy, or a
    /// nameless file killed in the instant it had a name).
    public static func sweep(directory: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasPrefix(namePrefix) {
            unlink(directory + "/" + name)
        }
    }
}
