#if canImport(Glibc)
import Glibc
#endif
import SavingsRPC

/// Creating the daemon's directories and checking its socket path.
enum PrivatePaths {
    /// Creates missing parent directories of `file` with mode 0700. Directories that already
    /// exist (e.g. /tmp, or one systemd made) are left exactly as they are.
    static func ensureParentDirectory(of file: String) throws(DaemonStartupError) {
        let parent = parentDirectory(of: file)
        guard !parent.isEmpty else { return }
        var missing: [String] = []
        var path = parent
        var info = stat()
        while !path.isEmpty, stat(path, &info) != 0 {
            missing.append(path)
            path = parentDirectory(of: path)
        }
        if !path.isEmpty, (info.st_mode & S_IFMT) != S_IFDIR {
            throw DaemonStartupError("\(path) is not a directory")
        }
        for directory in missing.reversed() {
            if mkdir(directory, 0o700) != 0, errno != EEXIST {
                throw DaemonStartupError("cannot create directory \(directory): \(String(cString: strerror(errno)))")
            }
            // mkdir honours the umask; state the mode explicitly for directories we create.
            chmod(directory, 0o700)
        }
    }

    /// `/a/b/c` → `/a/b`; `/a` → `` (the root needs no creating).
    static func parentDirectory(of path: String) -> String {
        String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
    }

    /// Refuses a socket directory that someone else could tamper with: owned by another user
    /// (root excepted), or writable by group/others without the sticky bit (as /tmp has).
    static func checkSocketDirectory(of socket: String) throws(DaemonStartupError) {
        let parent = parentDirectory(of: socket)
        var info = stat()
        guard !parent.isEmpty, stat(parent, &info) == 0 else { return }
        if info.st_uid != geteuid(), info.st_uid != 0 {
            throw DaemonStartupError("socket directory \(parent) belongs to another user (uid \(info.st_uid)); refusing to use it")
        }
        if info.st_mode & 0o022 != 0, info.st_mode & S_ISVTX == 0 {
            throw DaemonStartupError("socket directory \(parent) is writable by other users; refusing to use it")
        }
    }

    /// Makes `path` free for binding: a stale socket left by a dead daemon is removed; a live
    /// one (something accepts connections) or a non-socket file is an error.
    static func clearStaleSocket(at path: String) throws(DaemonStartupError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw DaemonStartupError("\(path) exists and is not a socket; refusing to replace it")
        }
        if (try? LineClient(socketPath: path)) != nil {
            throw DaemonStartupError("another savingsd is already listening on \(path)")
        }
        if unlink(path) != 0, errno != ENOENT {
            throw DaemonStartupError("cannot remove stale socket \(path): \(String(cString: strerror(errno)))")
        }
    }
}

/// A failure that stops the daemon before it is ready; the message goes to the operator.
public struct DaemonStartupError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
