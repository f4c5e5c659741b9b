import Foundation
import GRDB
import SavingsCore

/// Where automatic backups go and how many are kept.
public struct BackupPolicy: Sendable, Equatable {
    public var directory: String
    public var keep: Int

    public init(directory: String, keep: Int) {
        self.directory = directory
        self.keep = keep
    }
}

/// A finished backup.
public struct BackupInfo: Sendable, Equatable {
    public var path: String
    public var bytes: Int
    public var pages: Int
}

extension SavingsDatabase {
    /// A consistent online copy through SQLite's backup API, taken from one read snapshot while
    /// writers carry on. Written beside the target and renamed into place, mode 0600.
    /// `progress` hears (pages copied, pages in all) after each step of 256 pages.
    public func backup(to path: String, overwrite: Bool,
                       progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil) async throws -> BackupInfo {
        guard path.hasPrefix("/") else { throw DomainError.invalidField("path", "must be an absolute path") }
        var isDirectory: ObjCBool = false
        let parent = (path as NSString).deletingLastPathComponent
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw DomainError.invalidField("path", "the directory \(parent) does not exist")
        }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard overwrite, !isDirectory.boolValue else {
                throw DomainError(.conflict, "\(path) already exists (pass overwrite: true to replace it)", details: ["field": "path"])
            }
        }
        let source = writer
        return try await Task.detached {
            try Self.copy(from: source, to: path, progress: progress)
        }.value
    }

    /// Copies `source` into a new file at `path` (atomically replacing it).
    static func copy(from source: any DatabaseReader, to path: String,
                     progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil) throws -> BackupInfo {
        let partial = path + ".partial-\(UUID().uuidString.prefix(8))"
        do {
            _ = try DatabaseFile.preparePrivateFile(at: partial)
            let destination = try DatabaseQueue(path: partial)
            var pages = 0
            do {
                // One step holds the whole copy unless someone is watching its progress.
                try source.backup(to: destination, pagesPerStep: progress == nil ? -1 : 256) { step in
                    pages = step.totalPageCount
                    progress?(step.completedPageCount, step.totalPageCount)
                }
                try destination.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = DELETE") }
                try destination.close()
            } catch {
                try? destination.close()
                throw error
            }
            guard rename(partial, path) == 0 else {
                throw StoreError(message: "cannot move the backup into place: \(String(cString: strerror(errno)))")
            }
            let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            return BackupInfo(path: path, bytes: bytes, pages: pages)
        } catch let error as DomainError {
            unlink(partial)
            throw error
        } catch {
            unlink(partial)
            if let error = error as? DatabaseError, error.resultCode == .SQLITE_FULL {
                throw DomainError(.storageError, "the backup did not fit on the disk")
            }
            throw DomainError(.storageError, "the backup could not be written: \(Self.reason(error))")
        }
    }

    /// A file-system reason without internals: the errno text or SQLite's message.
    static func reason(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "SQLite error \(error.resultCode.rawValue)" }
        if let error = error as? StoreError { return error.message }
        return (error as NSError).localizedDescription
    }

    /// An automatic backup into the policy's directory, named by time and reason, then the
    /// oldest automatic backups beyond `keep` are removed.
    @discardableResult
    public func automaticBackup(reason: String, policy: BackupPolicy, now: Date) async throws -> BackupInfo {
        let source = writer
        return try await Task.detached {
            try Self.automaticBackup(from: source, reason: reason, policy: policy, now: now)
        }.value
    }

    static func automaticBackup(from source: any DatabaseReader, reason: String, policy: BackupPolicy, now: Date) throws -> BackupInfo {
        do {
            try FileManager.default.createDirectory(atPath: policy.directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw DomainError(.storageError, "cannot create the backup directory \(policy.directory)")
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss.SSS'Z'"
        let info = try copy(from: source, to: "\(policy.directory)/savingsd-\(formatter.string(from: now))-\(reason).db")
        prune(policy)
        return info
    }

    /// Removes the oldest automatic backups beyond `keep` (names sort by time).
    static func prune(_ policy: BackupPolicy) {
        for name in automaticBackups(policy).dropLast(max(policy.keep, 1)) {
            try? FileManager.default.removeItem(atPath: policy.directory + "/" + name)
        }
    }

    /// The automatic backups present, oldest first.
    public static func automaticBackups(_ policy: BackupPolicy) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: policy.directory)) ?? [])
            .filter { $0.hasPrefix("savingsd-") && $0.hasSuffix(".db") }.sorted()
    }
}
