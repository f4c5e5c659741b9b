import Foundation
import Testing
@testable import SavingsRPC

@Suite struct FileTransferMessageTests {
    @Test func aChunkLineReadsBackAsItsBytes() throws {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let line = FileTransfer.chunkLine(FileTransfer.uploadChunk, id: .number("12"), bytes: bytes)
        #expect(try FileTransfer.uploadMessage(line, id: .number("12")) == .chunk(Data(bytes)))
        // It is ordinary JSON-RPC: a notification naming the request.
        let value = try JSONParser.parse(line)
        #expect(value["method"] == "upload.chunk" && value["id"] == nil && value["params"]?["id"] == .number("12"))
        let string = FileTransfer.chunkLine(FileTransfer.downloadChunk, id: .string("a\"b"), bytes: [UInt8]())
        #expect(try JSONParser.parse(string)["params"]?["id"] == .string("a\"b"))
    }

    @Test func endAndAbortAreRecognised() throws {
        let end = JSONSerializer.bytes(FileTransfer.notification(FileTransfer.uploadEnd, id: .string("x")))
        #expect(try FileTransfer.uploadMessage(end, id: .string("x")) == .end)
        let abort = JSONSerializer.bytes(FileTransfer.notification(FileTransfer.uploadAbort, id: .string("x")))
        #expect(try FileTransfer.uploadMessage(abort, id: .string("x")) == .abort)
    }

    @Test(arguments: [
        (#"{"jsonrpc":"2.0","id":2,"method":"daemon.ping"}"#, "expected upload.chunk"),
        (#"{"jsonrpc":"2.0","method":"upload.chunk","params":{"id":8,"data":"AAAA"}}"#, "must name the upload's request"),
        (#"{"jsonrpc":"2.0","method":"upload.chunk","params":{"id":7,"data":"not base64!"}}"#, "base64"),
        (#"{"jsonrpc":"2.0","method":"upload.chunk","params":{"id":7}}"#, "base64"),
        (#"{"jsonrpc":"2.0","method":"upload.chunk","#, "not JSON"),
        (#"["upload.end"]"#, "expected upload.chunk"),
    ])
    func linesThatAreNotPartOfTheUploadAreNamed(line: String, fragment: String) {
        #expect {
            _ = try FileTransfer.uploadMessage(Array(line.utf8), id: .number("7"))
        } throws: { error in
            (error as? FileTransfer.Violation)?.description.contains(fragment) == true
        }
    }

    /// A full chunk's line stays within the line limit it was sized for.
    @Test(arguments: [1024, 2048, 65_536, 1_048_576, 64 << 20])
    func chunksFitTheLineLimit(limit: Int) {
        let size = FileTransfer.maxChunkBytes(lineLimit: limit)
        #expect(size <= FileTransfer.chunkBytes && size > 0)
        let line = FileTransfer.chunkLine(FileTransfer.uploadChunk, id: .string(String(repeating: "i", count: 40)),
                                          bytes: [UInt8](repeating: 0xFF, count: size))
        #expect(line.count <= limit, "\(line.count) > \(limit)")
    }
}
