import Foundation

/// Files over the connection: the messages with which a file's bytes travel on the same
/// line-delimited JSON-RPC connection as the request that needs them (docs/protocol.md,
/// "Files over the connection"). The client opens and writes files with its own permissions;
/// the daemon never needs to see the caller's file system.
///
/// Upload (`tx.import`, `data.import`, `data.legacy_import` with `upload`):
/// 1. the request carries `"upload": {"size"?: bytes}`;
/// 2. the daemon answers it with an error at once (nothing is to be sent), or sends
///    `{"method": "upload.ready", "params": {"id", "max_chunk_bytes", "max_bytes"}}`;
/// 3. the client sends `upload.chunk` notifications `{"id", "data": base64}` (each at most
///    `max_chunk_bytes` once decoded), then `upload.end` `{"id"}` (or `upload.abort`);
/// 4. the daemon answers the request as usual.
///
/// Download (`data.export`, `db.backup` with `"download": true`): the daemon sends
/// `download.start` `{"id", "bytes"}`, then `download.chunk` `{"id", "data": base64}` until
/// `bytes` have been sent, then the response (`{"bytes", ...}`). A response that is an error,
/// or a connection that ends before the response, means the download failed.
public enum FileTransfer {
    /// Which way a method's file travels (`x-transfer` in `rpc.discover`).
    public enum Direction: String, Sendable, Equatable {
        case upload, download
    }

    public static let uploadReady = "upload.ready"
    public static let uploadChunk = "upload.chunk"
    public static let uploadEnd = "upload.end"
    public static let uploadAbort = "upload.abort"
    public static let downloadStart = "download.start"
    public static let downloadChunk = "download.chunk"

    /// The exchange as `rpc.discover` describes it (`x-file-transfer`), from which
    /// docs/protocol.md's "Files over the connection" is written.
    public static let description: JSONValue = [
        "summary": "Methods marked x-transfer carry a file's bytes on the same connection, so the daemon never opens the caller's files.",
        "upload": [
            "methods": ["tx.import", "data.import", "data.legacy_import"],
            "request": "params.upload = {\"size\"?: bytes} instead of params.path; the request must have an id and stand alone (not in a batch)",
            "refused": "an error response at once: send nothing",
            "ready": .string("{\"jsonrpc\": \"2.0\", \"method\": \"\(uploadReady)\", \"params\": {\"id\", \"max_chunk_bytes\", \"max_bytes\"}}"),
            "chunk": .string("{\"jsonrpc\": \"2.0\", \"method\": \"\(uploadChunk)\", \"params\": {\"id\", \"data\": base64 of at most max_chunk_bytes}}"),
            "end": .string("{\"jsonrpc\": \"2.0\", \"method\": \"\(uploadEnd)\", \"params\": {\"id\"}} (or \(uploadAbort) to give up: the connection goes on)"),
            "response": "the method's result or error, once the file is in",
            "failure": "past max_bytes (too_large), a malformed chunk or an idle timeout: the error is answered and the connection closed; nothing is imported",
        ],
        "download": [
            "methods": ["data.export", "db.backup"],
            "request": "params.download = true instead of params.path; the request must have an id and stand alone (not in a batch)",
            "start": .string("{\"jsonrpc\": \"2.0\", \"method\": \"\(downloadStart)\", \"params\": {\"id\", \"bytes\"}}"),
            "chunk": .string("{\"jsonrpc\": \"2.0\", \"method\": \"\(downloadChunk)\", \"params\": {\"id\", \"data\": base64}}"),
            "response": "the method's result ({\"bytes\", ...}): the file is complete; an error or a closed connection: discard what arrived",
        ],
    ]

    /// Raw bytes per chunk when nothing smaller is asked for: 256 KiB of base64 on the line.
    public static let chunkBytes = 192 * 1024

    /// The largest raw chunk whose line stays within `lineLimit` bytes (base64 takes 4 bytes
    /// for every 3, the envelope less than 256).
    public static func maxChunkBytes(lineLimit: Int) -> Int {
        max(3, min(chunkBytes, (lineLimit - 256) / 4 * 3))
    }

    /// A chunk notification, `{"jsonrpc":"2.0","method":METHOD,"params":{"id":ID,"data":"BASE64"}}`,
    /// written without building its JSON value.
    public static func chunkLine(_ method: String, id: RequestID, bytes: some DataProtocol) -> [UInt8] {
        let encoded = Data(bytes).base64EncodedData()
        var line: [UInt8] = []
        line.reserveCapacity(encoded.count + method.utf8.count + 80)
        line.append(contentsOf: #"{"jsonrpc":"2.0","method":""#.utf8)
        line.append(contentsOf: method.utf8)
        line.append(contentsOf: #"","params":{"id":"#.utf8)
        line.append(contentsOf: JSONSerializer.bytes(id.json))
        line.append(contentsOf: #","data":""#.utf8)
        line.append(contentsOf: encoded)
        line.append(contentsOf: #""}}"#.utf8)
        return line
    }

    /// A notification of the transfer that carries no data (`upload.ready`, `upload.end`, ...).
    public static func notification(_ method: String, id: RequestID, _ params: [String: JSONValue] = [:]) -> JSONValue {
        var params = params
        params["id"] = id.json
        return ["jsonrpc": "2.0", "method": .string(method), "params": .object(params)]
    }

    /// What a client sent during an upload.
    public enum UploadMessage: Equatable, Sendable {
        case chunk(Data)
        case end
        case abort
    }

    /// Why a line is not part of the upload in progress.
    public struct Violation: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Reads one line sent during the upload of request `id`.
    public static func uploadMessage(_ line: [UInt8], id: RequestID) throws(Violation) -> UploadMessage {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            throw Violation(description: "a line of the upload is not JSON (\(error.description))")
        }
        guard case .object(let members) = value, let method = members["method"]?.stringValue,
              [uploadChunk, uploadEnd, uploadAbort].contains(method), members["id"] == nil
        else {
            throw Violation(description: "expected \(uploadChunk), \(uploadEnd) or \(uploadAbort) notifications until the upload ends")
        }
        guard let params = members["params"]?.objectValue, params["id"] == id.json else {
            throw Violation(description: "\(method) must name the upload's request in params.id")
        }
        switch method {
        case uploadEnd: return .end
        case uploadAbort: return .abort
        default:
            guard let text = params["data"]?.stringValue, let data = Data(base64Encoded: text) else {
                throw Violation(description: "\(uploadChunk) needs params.data, the chunk's bytes in base64")
            }
            return .chunk(data)
        }
    }
}
