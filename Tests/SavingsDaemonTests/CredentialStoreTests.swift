import Foundation
import Testing
@testable import SavingsDaemon

/// Secrets of linked accounts are read from files no one else can read, and never show.
@Suite struct CredentialStoreTests {
    func store() throws -> (CredentialStore, String) {
        let directory = NSTemporaryDirectory() + "creds-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        return (CredentialStore(directory: directory), directory)
    }

    func write(_ text: String, _ path: String, mode: Int = 0o600) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    @Test func aPrivateFileIsReadAndNeverShown() throws {
        let (store, directory) = try store()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write("kQH5HW/8p1uGOVjbgWA7FunAmGO8\n", directory + "/kraken-main")
        let secret = try store.secret("kraken-main")
        #expect(secret.reveal() == "kQH5HW/8p1uGOVjbgWA7FunAmGO8", "the editor's line end is not part of it")
        #expect("\(secret)" == "(the credential 'kraken-main')" && String(reflecting: secret) == "(the credential 'kraken-main')")
        #expect(!"\([secret])".contains("kQH5"), "not even inside a collection")
    }

    @Test func whatIsNotPrivateOrNotAFileIsRefusedWithoutSayingWhere() throws {
        let (store, directory) = try store()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write("s3cr3t", directory + "/shared", mode: 0o644)
        try write("s3cr3t", directory + "/target")
        try FileManager.default.createSymbolicLink(atPath: directory + "/linked", withDestinationPath: directory + "/target")
        try FileManager.default.createDirectory(atPath: directory + "/folder", withIntermediateDirectories: false)
        try write(String(repeating: "x", count: CredentialStore.maxBytes + 1), directory + "/huge")
        let cases: [(String, String)] = [("shared", "other users may read"), ("linked", "symbolic link"), ("folder", "not a regular file"),
                                         ("huge", "larger than 64 KiB"), ("absent", "there is no credential"),
                                         ("../etc/passwd", "is not a credential's name"), ("", "is not a credential's name"),
                                         (".hidden", "is not a credential's name")]
        for (name, words) in cases {
            do {
                _ = try store.secret(name)
                Issue.record("\(name) was read")
            } catch {
                #expect(error.description.contains(words), "\(name): \(error)")
                #expect(!error.description.contains(directory) && !error.description.contains("s3cr3t"), "\(error)")
            }
        }
    }

    @Test func systemdsDirectoryComesFirst() {
        #expect(CredentialStore.current(configured: "/etc/savingsd/credentials", environment: ["CREDENTIALS_DIRECTORY": "/run/credentials/savingsd.service"])?.directory
            == "/run/credentials/savingsd.service")
        #expect(CredentialStore.current(configured: "/etc/savingsd/credentials", environment: [:])?.directory == "/etc/savingsd/credentials")
        #expect(CredentialStore.current(configured: nil, environment: [:]) == nil)
    }
}
