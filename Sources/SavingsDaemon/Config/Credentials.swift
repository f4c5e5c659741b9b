import Foundation
import SavingsCore
#if canImport(Glibc)
import Glibc
#endif

/// A secret read from a credentials file: its text goes to the code that signs with it and
/// nowhere else. It never prints (`description` says what it is, not what it holds), so a log
/// line, an error or a dump of a value that holds one cannot show it.
public struct Secret: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public let name: String
    private let text: String

    init(name: String, text: String) {
        self.name = name
        self.text = text
    }

    /// The secret's text, for signing.
    public func reveal() -> String { text }

    public var description: String { "(the credential '\(name)')" }
    public var debugDescription: String { description }
}

/// Where the secrets of linked accounts live (issue 50): never in the database, an export, the
/// configuration or a request. Under systemd, `LoadCredential=` puts each in
/// `$CREDENTIALS_DIRECTORY`; otherwise a directory the configuration names. A link names its
/// credential; the daemon reads the file when it signs.
///
/// A credential is a regular file (no link followed), owned by the daemon's user or root, that
/// no other user may read or write, and of at most 64 KiB; its name is a plain file name. A
/// refusal names the credential, never the directory or the content.
public struct CredentialStore: Sendable {
    public let directory: String

    public static let maxBytes = 64 * 1024

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case badName(String)
        case missing(String)
        case unsafe(String, why: String)
        case unreadable(String)

        public var description: String {
            switch self {
            case .badName(let name): "'\(name)' is not a credential's name (letters, digits, '.', '-' and '_', at most 64)"
            case .missing(let name): "there is no credential '\(name)' in the credentials directory"
            case .unsafe(let name, let why): "the credential '\(name)' is refused: \(why)"
            case .unreadable(let name): "the credential '\(name)' cannot be read"
            }
        }
    }

    public init(directory: String) { self.directory = directory }

    /// The store systemd's `LoadCredential=` gives the service, else the configured directory.
    public static func current(configured: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> CredentialStore? {
        if let systemd = environment["CREDENTIALS_DIRECTORY"], !systemd.isEmpty { return CredentialStore(directory: systemd) }
        return configured.map(CredentialStore.init(directory:))
    }

    static func validName(_ name: String) -> Bool { (try? AccountLink.checkCredentialName(name)) != nil }

    /// The credential `name`, read now (a file replaced since is read as it is now).
    public func secret(_ name: String) throws(Failure) -> Secret {
        guard Self.validName(name) else { throw .badName(String(name.prefix(64))) }
        let descriptor = open(directory + "/" + name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ELOOP { throw .unsafe(name, why: "it is a symbolic link") }
            if errno == ENOENT { throw .missing(name) }
            throw .unreadable(name)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .unreadable(name) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .unsafe(name, why: "it is not a regular file") }
        guard info.st_uid == geteuid() || info.st_uid == 0 else { throw .unsafe(name, why: "it belongs to another user") }
        guard info.st_mode & 0o077 == 0 else { throw .unsafe(name, why: "other users may read or change it (chmod 600 it)") }
        guard info.st_size <= off_t(Self.maxBytes) else { throw .unsafe(name, why: "it is larger than 64 KiB") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else { throw .unreadable(name) }
            if read == 0 { break }
            count += read
        }
        guard count <= Self.maxBytes, let text = String(validating: bytes[..<count], as: UTF8.self) else { throw .unreadable(name) }
        // A trailing line end (an editor's, `echo`'s) is not part of a key.
        return Secret(name: name, text: text.trimmingCharacters(in: .newlines))
    }

    /// Whether savingsd may write credentials here (systemd's directory is read-only).
    public var writable: Bool { access(directory, W_OK) == 0 }

    /// Replaces a credential's text (a SimpleFIN setup token by the access URL it was claimed
    /// for): a new file, 0600, written in full and synced, then renamed over the old one.
    public func replace(_ name: String, with text: String) throws(Failure) {
        guard Self.validName(name) else { throw .badName(String(name.prefix(64))) }
        let partial = directory + "/." + name + ".new"
        unlink(partial)
        let descriptor = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .unsafe(name, why: "it cannot be written in the credentials directory") }
        let bytes = Array((text + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            written += count
        }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, synced, rename(partial, directory + "/" + name) == 0 else {
            unlink(partial)
            throw .unsafe(name, why: "it could not be written in full")
        }
        // The rename itself reaches the disk: a crash after it must not bring the spent token back.
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}
