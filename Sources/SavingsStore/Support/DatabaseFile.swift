#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File-system preparation for the database file.
enum DatabaseFile {
    /// Creates the file with mode 0600 if it does not exist (SQLite gives its -wal and -shm
    /// files the same mode), and tightens an existing file we own to 0600.
    /// Returns whether the file existed with content.
    static func preparePrivateFile(at path: String) throws -> Bool {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFREG else {
                throw StoreError(message: "database path \(path) exists and is not a regular file")
            }
            if info.st_uid == geteuid(), info.st_mode & 0o077 != 0 { chmod(path, 0o600) }
            return info.st_size > 0
        }
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError(message: "cannot create database \(path): \(String(cString: strerror(errno)))")
        }
        close(fd)
        return false
    }
}
