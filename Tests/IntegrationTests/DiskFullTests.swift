import Foundation
import SavingsRPC
import Testing

/// A full disk: writes fail with storage_error, reads go on, and writing resumes once there is
/// space again. Runs where a small tmpfs can be mounted (root, with mount permission).
@Suite struct DiskFullTests {
    static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    static let canMount: Bool = {
        guard getuid() == 0, let directory = try? makeScratchDirectory() else { return false }
        defer { rmdir(directory) }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", directory]) == 0 else { return false }
        return run("/bin/umount", [directory]) == 0
    }()

    @Test(.enabled(if: canMount, "needs permission to mount a tmpfs"))
    func writesFailCleanlyWhenTheDiskIsFullAndResumeAfter() throws {
        let directory = try makeScratchDirectory()
        let volume = directory + "/db"
        try FileManager.default.createDirectory(atPath: volume, withIntermediateDirectories: true)
        #expect(Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", volume]) == 0)
        defer { _ = Self.run("/bin/umount", ["-l", volume]) }
        let daemon = try DaemonProcess(directory: directory)
        defer { _ = daemon.stop() }
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "10"])

        // Fill the volume.
        let filler = volume + "/filler"
        _ = FileManager.default.createFile(atPath: filler, contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: filler))
        let block = Data(repeating: 0x55, count: 64 * 1024)
        while (try? handle.write(contentsOf: block)) != nil {}
        try? handle.close()

        var failure: RPCError?
        for n in 0..<400 where failure == nil {
            let note = String(repeating: "n", count: 9_000)
            do {
                _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "1", "note": .string(note), "external_id": .string("full-\(n)")])
            } catch let error as RPCClient.CallError {
                if case .remote(let remote) = error { failure = remote } else { throw error }
            }
        }
        let refused = try #require(failure, "a write failed once the disk was full")
        #expect(refused.kind == "storage_error")
        #expect(!refused.message.contains(volume), "no paths in what the client sees")
        #expect(try daemon.call("daemon.ping")["pong"] == true, "the daemon keeps serving")
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] != nil, "reads still work")

        try FileManager.default.removeItem(atPath: filler)
        let recovered = try daemon.call("tx.add", ["asset": "Bank", "amount": "5", "external_id": "after"])
        #expect(recovered["amount"] == "5.00")
        #expect(try daemon.call("db.check")["ok"] == true)
    }
}
