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
        \(discover["openrpc"]?.stringValue ?? "") JSON.

        ## Errors

        | code | meaning |
        |---|---|
        | -32700 | the line is not JSON |
        | -32600 | not a JSON-RPC 2.0 request (or an empty or too large batch) |
        | -32601 | unknown method |
        | -32602 | invalid params; `data.field` names the parameter |
        | -32603 | internal error (details are logged, never sent) |
        | -32000 | domain error; `data.kind` says which: `not_found`, `conflict`, `invalid_amount`, `invalid_field`, `invalid_state`, `ambiguous`, `too_large`, `read_only`, `permission_denied`, `busy`, `storage_error`, ... |

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
        return out
    }

    static func section(_ method: JSONValue) -> String {
        let name = method["name"]?.stringValue ?? "?"
        var out = "### `\(name)`\n\n\(method["summary"]?.stringValue ?? "")"
        if method["x-writes"] == true { out += " *writes*" }
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
        let result = method["result"]
        out += "Result (`\(result?["name"]?.stringValue ?? "result")`): \(result?["description"]?.stringValue.map { "`\($0)`" } ?? "-")\n\n"
        var example: [String: JSONValue] = ["jsonrpc": "2.0", "id": 1, "method": .string(name)]
        let required = params.filter { $0["required"] == true }
        if !required.isEmpty {
            example["params"] = .object(Dictionary(uniqueKeysWithValues: required.map { param in
                let key = param["name"]?.stringValue ?? "?"
                return (key, sample(key, param["schema"]))
            }))
        }
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
}
