import Foundation
import SavingsCore
import SavingsRPC
import ServiceLifecycle

/// The daemon's side of files over the connection (`FileTransfer` has the messages): an
/// upload is received into a `Spool` before the method uses it; a download is sent from one.
enum Transfer {
    /// The parameter of a method that reads a file the caller sends.
    static func uploadParam(_ what: String) -> ParamSpec {
        .optional("upload", .object, "send \(what) over this connection instead of naming a path: {\"size\"?: bytes}; "
                  + "chunks follow the daemon's upload.ready (see \"Files over the connection\")")
    }

    /// The parameter of a method that writes a file the caller receives.
    static let downloadParam = ParamSpec.optional(
        "download", .boolean, "send the file over this connection (download.start, download.chunk, then the response) instead of writing PATH")

    /// Whether the call sends its file over the connection; exactly one of `path` and `upload`.
    static func isUpload(_ params: Params) throws -> Bool {
        switch (params.has("path"), params.has("upload")) {
        case (true, true): throw DomainError.invalidField("upload", "give either path or upload, not both")
        case (false, false): throw RPCError.invalidParams("missing required parameter path (or upload, to send the file over the connection)", param: "path")
        case (_, let upload): return upload
        }
    }

    /// Whether the call asked for a download instead of a file the daemon writes.
    static func isDownload(_ params: Params) throws -> Bool {
        guard params.bool("download") == true else { return false }
        if params.has("path") { throw DomainError.invalidField("download", "give either path or download, not both") }
        return true
    }

    /// The request's id and the connection's reader and writer; an upload or download needs all three.
    private static func channel(_ call: CallContext, _ what: String) throws -> (RequestID, @Sendable () async throws -> [UInt8]?,
                                                                                 @Sendable ([UInt8]) async throws -> Void) {
        guard let id = call.requestID, id != .null, let receive = call.receive, let send = call.send else {
            throw DomainError.invalidField(what, "a file travels only with a request of its own that has an id (not a notification, not inside a batch)")
        }
        return (id, receive, send)
    }

    /// Receives the file the caller sends, at most `limit` bytes, into a spool in `directory`.
    /// Refused before `upload.ready` (a declared size past the limit): the connection goes on.
    /// Failed after it: the error is answered and the connection closed, since the rest of the
    /// file may still be on its way. Nothing of a failed upload remains.
    static func receive(_ params: Params, call: CallContext, method: String, limit: Int, lineLimit: Int,
                        directory: String) async throws -> Spool {
        let (id, receive, send) = try channel(call, "upload")
        let progress = params.bool("progress") == true
        let upload = params.values["upload"]?.objectValue ?? [:]
        for key in upload.keys where key != "size" {
            throw DomainError.invalidField("upload", "unknown member \(key) (upload takes {\"size\"?: bytes})")
        }
        let announced = upload["size"]?.intValue
        if upload["size"] != nil, announced.map({ $0 >= 0 }) != true {
            throw DomainError.invalidField("upload", "size must be a whole number of bytes")
        }
        if let announced, announced > limit { throw tooLarge(announced, limit: limit) }
        let spool = try Spool(directory: directory)
        let maxChunk = FileTransfer.maxChunkBytes(lineLimit: lineLimit)
        do {
            try await send(JSONSerializer.bytes(FileTransfer.notification(
                FileTransfer.uploadReady, id: id, ["max_chunk_bytes": .int(maxChunk), "max_bytes": .int(limit)])))
            var reported = 0
            receiving: while true {
                guard let line = try await receive() else {
                    throw DomainError(.invalidState, "the connection ended before the upload did; nothing was imported")
                }
                switch try FileTransfer.uploadMessage(line, id: id) {
                case .chunk(let bytes):
                    guard bytes.count <= maxChunk else {
                        throw DomainError.invalidField("upload", "a chunk holds \(bytes.count) bytes; at most \(maxChunk) are accepted")
                    }
                    guard spool.size + bytes.count <= limit else { throw tooLarge(spool.size + bytes.count, limit: limit) }
                    try spool.append(bytes)
                    if progress, spool.size - reported >= 4 << 20 {
                        reported = spool.size
                        call.progress(method, phase: "receiving", done: spool.size, total: announced)
                    }
                case .end:
                    break receiving
                case .abort:
                    // The client stopped sending: the connection is in step and goes on.
                    throw DomainError(.conflict, "the upload was cancelled by the client; nothing was imported")
                }
            }
        } catch let violation as FileTransfer.Violation {
            call.endConnection?()
            throw DomainError.invalidField("upload", violation.description)
        } catch let error as DomainError where error.kind == .conflict {
            throw error
        } catch {
            call.endConnection?()
            throw error
        }
        if let announced, announced != spool.size {
            throw DomainError.invalidField("upload", "announced \(announced) bytes but \(spool.size) arrived; nothing was imported")
        }
        return spool
    }

    static func tooLarge(_ size: Int, limit: Int) -> DomainError {
        DomainError(.tooLarge, "the upload is larger than \(limit) bytes (rpc.max_upload_bytes)", details: ["limit": String(limit)])
    }

    /// Sends the spool's bytes to the caller: `download.start`, then chunks. The daemon's
    /// shutdown cuts a download short (an error is the answer, so the caller keeps no file).
    static func send(_ spool: Spool, call: CallContext, method: String, progress: Bool) async throws {
        let (id, _, send) = try channel(call, "download")
        try await send(JSONSerializer.bytes(FileTransfer.notification(FileTransfer.downloadStart, id: id, ["bytes": .int(spool.size)])))
        var offset = 0, reported = 0
        while offset < spool.size {
            if Task.isShuttingDownGracefully {
                throw DomainError(.busy, "the daemon is shutting down; the download was cut short (try again once it is back)")
            }
            let chunk = try spool.read(at: offset, count: FileTransfer.chunkBytes)
            guard !chunk.isEmpty else { break }
            try await send(FileTransfer.chunkLine(FileTransfer.downloadChunk, id: id, bytes: chunk))
            offset += chunk.count
            if progress, offset - reported >= 4 << 20 || offset == spool.size {
                reported = offset
                call.progress(method, phase: "sending", done: offset, total: spool.size)
            }
        }
    }
}
