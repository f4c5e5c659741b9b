/// docs/protocol.md, written from the OpenRPC document `rpc.discover` returns (itself generated
/// from the method registry), so the reference cannot drift from what the daemon accepts.
public enum ProtocolDocument {
    public static func markdown(discover: JSONValue) -> String {
        var out = """
        # savingsd protocol reference

        <!-- Generated from rpc.discover by `make docs`; a test fails when it differs from the daemon. -->

        savingsd speaks [JSON-RPC 2.0](https://www.jsonrpc.org/specification) over a Unix socket, one
        JSON document (a request or a batch array) per line, one response line per request line.
        Parameters are passed by name. Amounts are exact decimal strings; JSON numbers are read
        exactly too. Timestamps are UTC ISO 8601 with milliseconds (`2026-11-22T10:00:00.000Z`),
        dates `YYYY-MM-DD`, months `YYYY-MM`. `rpc.discover` returns this reference as OpenRPC
        \(discover["openrpc"]?.stringValue ?? "") JSON (committed as docs/openrpc.json): each result is a JSON Schema
        (draft 7), and the types results share are under `components.schemas`, listed under
        [Types](#types) below. Every answer the integration tests receive is checked against its
        method's schema.

        ## Errors

        | code | meaning |
        |---|---|
        | -32700 | the line is not JSON |
        | -32600 | not a JSON-RPC 2.0 request (or an empty or too large batch) |
        | -32601 | unknown method |
        | -32602 | invalid params: `data.kind` is `invalid_field`; `data.param` (and `data.field`) name the parameter: `rules` for anything a rules file or preset says, `path` or `upload` for the file |
        | -32603 | internal error (details are logged, never sent) |
        | -32000 | domain error; `data.kind` says which: `not_found`, `conflict`, `invalid_amount`, `invalid_state`, `ambiguous`, `too_large`, `read_only`, `permission_denied`, `busy`, `storage_error`, `invalid_watch`, `not_configured`, `watched_asset`, `provider_unavailable`, ... |

        Methods marked *writes* change data: they fail with `read_only` for members of
        `read_only_groups`, and every successful one publishes a `data.changed` event.

        ## Progress of long methods

        Methods with a `progress` parameter (imports, exports, backups, checks) send, when it is
        `true`, notifications on the same connection before their response:
        `{"jsonrpc": "2.0", "method": "progress", "params": {"method", "phase", "done", "total"?}}`.
        While such a call runs the daemon is heard from at least every 2 seconds: its own progress,
        or in a quiet stretch the last notification again (`phase: "working"`, `done: 0` before the
        first). A client may therefore wait as long as the work takes and still treat a silence of
        a few seconds (savingsctl: 10) as a daemon that has stopped answering.

        ## On-chain assets

        A crypto asset can watch a chain (`asset.watch`) instead of being typed in by hand: an
        extended public key (its receive and change chains, gap limit 20) or up to 200 addresses,
        optionally one ERC-20 `token`. Keys and addresses are checked before any request (base58check, bech32/bech32m,
        the chain's prefixes; `0x` + 40 hex on ethereum, with the EIP-55 checksum when in mixed
        case): a typo is `invalid_watch`; a chain without `[onchain.CHAIN]` in the configuration
        is `not_configured`. Each sync stores a
        transaction per txid (`source: "onchain"`, `external_id` the txid, dated at its block
        time) whose amount is the outputs to the watched set less its inputs from it (a send
        includes its fee), exact from the smallest unit; one with fewer than `min_confirmations`
        is only reported in `watch.pending`. A stored transaction the provider no longer lists in
        a block is removed; a sync that would remove more than 10 and more than half of what is
        stored fails instead (a provider that lost its index). The provider's confirmed balance
        is `watch.reported_balance`, and `reconciled` says whether it equals the stored balance
        plus the pending transactions it already counts. `tx.add` on a watched asset is
        `watched_asset`; `asset.unwatch` keeps what was imported. Syncs run at start, on a new
        watch and every `[onchain] interval`; `asset.sync` runs one now (or waits for the one
        running) and fails with `provider_unavailable` (`data.retry_in_seconds`) when the provider
        does. Each sync publishes `asset.synced` (`asset`, `added`, `removed` txids, `pending`,
        `reconciled`, `balance`) or `asset.sync_failed` (`asset`, `error`, `retry_in_seconds`),
        and `data.changed` when it changed stored transactions. The `xpub` is shown shortened.

        \(fileTransfer)
        ## Methods


        """
        let methods = (discover["methods"]?.arrayValue ?? []).sorted { ($0["name"]?.stringValue ?? "") < ($1["name"]?.stringValue ?? "") }
        out += methods.map { method in
            let name = method["name"]?.stringValue ?? "?"
            return "- [`\(name)`](#\(name.replacingOccurrences(of: ".", with: "")))"
        }.joined(separator: "\n") + "\n"
        for method in methods {
            out += "\n" + section(method)
        }
        out += "\n" + types(discover)
        return out
    }

    static func section(_ method: JSONValue) -> String {
        let name = method["name"]?.stringValue ?? "?"
        var out = "### `\(name)`\n\n\(method["summary"]?.stringValue ?? "")"
        if method["x-writes"] == true { out += " *writes*" }
        if let transfer = method["x-transfer"]?.stringValue { out += " *\(transfer)*" }
        out += "\n\n"
        let params = method["params"]?.arrayValue ?? []
        if params.isEmpty {
            out += "No parameters.\n\n"
        } else {
            out += "| param | type | required | meaning |\n|---|---|---|---|\n"
            for param in params {
                let required = param["required"] == true ? "yes" : "no"
                let meaning = (param["description"]?.stringValue ?? "").replacingOccurrences(of: "|", with: "\\|")
                out += "| `\(param["name"]?.stringValue ?? "?")` | \(type(param["schema"])) | \(required) | \(meaning) |\n"
            }
            out += "\n"
        }
        out += result(method["result"])
        var example: [String: JSONValue] = ["jsonrpc": "2.0", "id": 1, "method": .string(name)]
        let required = params.filter { $0["required"] == true }
        var exampleParams = Dictionary(uniqueKeysWithValues: required.map { param in
            let key = param["name"]?.stringValue ?? "?"
            return (key, sample(key, param["schema"]))
        })
        switch method["x-transfer"]?.stringValue {
        case "upload": exampleParams["upload"] = ["size": 52_340]
        case "download": exampleParams["download"] = true
        default: break
        }
        if !exampleParams.isEmpty { example["params"] = .object(exampleParams) }
        out += "```json\n\(JSONSerializer.serialize(.object(example)))\n```\n"
        return out
    }

    /// A short name for a parameter's schema.
    static func type(_ schema: JSONValue?) -> String {
        guard let schema else { return "any" }
        if let options = schema["oneOf"]?.arrayValue {
            if schema["description"]?.stringValue?.contains("decimal") == true { return "decimal" }
            let names = options.map { type($0) }
            return Array(Set(names)).sorted().joined(separator: " or ")
        }
        if schema["format"] == "date" { return "date" }
        if schema["description"]?.stringValue == "id or unique name" { return "id or name" }
        switch schema["type"]?.stringValue {
        case "array": return "array of \(type(schema["items"]))"
        case "integer":
            let low = schema["minimum"].map(JSONSerializer.serialize), high = schema["maximum"].map(JSONSerializer.serialize)
            return high.map { "integer \(low ?? "")–\($0)" } ?? low.map { "integer ≥ \($0)" } ?? "integer"
        case let type?: return type
        default: return "any"
        }
    }

    /// A plausible value for the example request.
    static func sample(_ name: String, _ schema: JSONValue?) -> JSONValue {
        switch type(schema) {
        case "decimal", "decimal or null": return name == "rate" ? "1.08" : "100.00"
        case "date": return "2027-06-30"
        case "boolean": return true
        case "id or name": return name == "asset" ? "Bank" : "Emergency"
        case let other where other.hasPrefix("integer"): return 1
        case let other where other.hasPrefix("array"): return ["EUR"]
        default:
            switch name {
            case "currency", "base", "quote", "from", "to": return name == "base" || name == "from" ? "BTC" : "EUR"
            case "month": return "2026-11"
            case "name": return "Emergency"
            case "path": return "/home/me/file"
            case "kind": return "fiat"
            default: return .string(name)
            }
        }
    }

    /// The prose of "Files over the connection", with the message names of `FileTransfer`.
    static let fileTransfer = """
        ## Files over the connection

        The daemon may run as another user than its callers (the system service runs with its own
        dynamic user, and sees neither `/home` nor the caller's `/tmp`), so a file travels over the
        connection instead of by name: the client opens and writes it with its own permissions.
        Methods marked *upload* (`tx.import`, `data.import`, `data.legacy_import`) take
        `"upload": {"size": BYTES}` (size optional) instead of `path`; methods marked *download*
        (`data.export`, `db.backup`) take `"download": true`. `path` stays for files on the
        daemon's own side. Such a request must carry an id and stand alone on its line (not in a
        batch). Bytes are sent in base64, in chunks of at most `max_chunk_bytes` (192 KiB, less
        when `max_line_bytes` is smaller), so every line stays within the line limit and neither
        side holds more than a chunk.

        Upload, as the client sees it:

        1. `{"jsonrpc": "2.0", "id": 7, "method": "tx.import", "params": {"asset": "Bank", "upload": {"size": 52340}}}`
        2. The daemon checks the call first. A refusal (unknown asset, `read_only`, a size over
           `max_upload_bytes`) is the response, at once: send nothing. Otherwise it sends
           `{"jsonrpc": "2.0", "method": "\(FileTransfer.uploadReady)", "params": {"id": 7, "max_chunk_bytes": 196608, "max_bytes": 1073741824}}`.
        3. Send the file as notifications
           `{"jsonrpc": "2.0", "method": "\(FileTransfer.uploadChunk)", "params": {"id": 7, "data": "ZGF0ZSxhbW91bnQK..."}}`,
           then `{"jsonrpc": "2.0", "method": "\(FileTransfer.uploadEnd)", "params": {"id": 7}}`
           (or `\(FileTransfer.uploadAbort)` to give up: the response is a `conflict` error and the
           connection goes on).
        4. The response to request 7 follows once the file has been used, as for `path`.

        The daemon holds the upload in a file with no name beside its database and uses it only
        once it is complete, so a client that disconnects half-way leaves nothing imported and no
        file behind. Uploads count against the connection limits; each chunk is a line
        (`max_line_bytes`); a client that stops sending for `idle_timeout` is disconnected; past
        `max_upload_bytes` (default 1 GiB) the answer is `too_large`. After a failure in step 3
        (too large, a line that is not a chunk of this upload, a full disk) the error is the
        response and the connection is closed, since the rest of the file may still be on its
        way. Progress (`progress: true`) reports `phase: "receiving"` with the bytes so far.

        Download:

        1. `{"jsonrpc": "2.0", "id": 8, "method": "db.backup", "params": {"download": true}}`
        2. The daemon takes the file whole first (a backup through SQLite's backup API while
           writers continue, or the export from one snapshot), then sends
           `{"jsonrpc": "2.0", "method": "\(FileTransfer.downloadStart)", "params": {"id": 8, "bytes": 2093056}}`
           and `{"jsonrpc": "2.0", "method": "\(FileTransfer.downloadChunk)", "params": {"id": 8, "data": "U1FMaXRl..."}}`
           until `bytes` have been sent, waiting while the client does not read.
        3. The response (`{"bytes", "pages"}` / `{"bytes", "counts"}`) says the file is complete.
           An error response (the daemon shutting down cuts a download short with `busy`) or a
           connection that ends first means the download failed: discard what arrived. Write
           to a temporary name and rename once the response is a result, as savingsctl does.

        `examples/savings_client.py` has both in a few lines of Python; `rpc.discover` describes
        them under `x-file-transfer`, and marks each method with `x-transfer`.

        """
}
