import SavingsRPC

/// Error messages that say what to do next: the daemon's message, its kind, then a hint
/// chosen by the kind and the method that failed.
public enum Hints {
    public static func message(for error: RPCError, method: String) -> String {
        var text = error.message
        if let kind = error.kind { text += " [\(kind)]" }
        if let hint = hint(for: error, method: method) { text += "\n  next: " + hint }
        return text
    }

    static func listing(_ method: String) -> String {
        switch method.split(separator: ".").first {
        case "goal": "see the goals with: savingsctl goal list --all"
        case "asset", "tx": "see the assets with: savingsctl asset list"
        case "allocation": "see the goals and assets with: savingsctl goal list; savingsctl asset list"
        case "plan": "see this month's plans with: savingsctl plan list (or --month YYYY-MM)"
        case "month": "start the current month with: savingsctl month start; closed months: savingsctl month history"
        case "rates": "see the rates with: savingsctl rates list"
        default: "see what exists with: savingsctl dashboard"
        }
    }

    public static func hint(for error: RPCError, method: String) -> String? {
        switch error.code {
        case RPCError.methodNotFoundCode: return "list the methods with: savingsctl call help"
        case RPCError.invalidParamsCode: return "see the method's parameters with: savingsctl call rpc.discover (or docs/protocol.md)"
        case RPCError.internalErrorCode: return "the daemon logged the details (journalctl -u savingsd, or --user); please report it"
        default: break
        }
        switch error.kind {
        case "not_found"?: return listing(method)
        case "ambiguous"?: return "give the id instead of the name (savingsctl goal list --json or asset list --json shows ids)"
        case "invalid_amount"?: return "write amounts as plain decimals with a point, e.g. 1250.50"
        case "insufficient_balance"?:
            let available = error.data?["available"]?.stringValue.map { " (available: \($0))" } ?? ""
            return "record the deposit first (savingsctl tx add ASSET AMOUNT) or use less\(available)"
        case "conflict"? where method == "data.demo": return nil
        case "conflict"? where method == "data.import": return "import into an empty database, or replace its data with --replace (a backup is made first)"
        case "conflict"?: return "pick another name, or change the existing one (savingsctl goal edit / asset edit)"
        case "plan_locked"?: return "the month is executing or closed; return it to draft with: savingsctl month undo-start (within the undo window)"
        case "invalid_state"?: return "see where the month stands with: savingsctl month status"
        case "undo_expired"?: return "the undo window has passed; make the opposite change instead"
        case "rate_unavailable"?: return "set a rate with: savingsctl rates set BASE QUOTE RATE, or fetch them with: savingsctl call rates.refresh"
        case "permission_denied"? where error.data?["field"] != nil:
            // A path on the daemon's side, named by a user other than the daemon's own.
            return "let savingsctl send and receive the file with your own permissions (savingsctl tx import, import, export, backup take your own paths)"
        case "permission_denied"?: return "ask the daemon's owner to allow your user or group (rpc.allow_uids / rpc.allow_groups)"
        case "read_only"?: return "your group may only read; ask the daemon's owner for write access (rpc.allow_groups)"
        case "too_large"? where ["tx.import", "data.import", "data.legacy_import"].contains(method):
            return "split the file, or have the daemon's owner raise [rpc] max_upload_bytes"
        case "too_large"?: return "split the input into smaller files or batches"
        case "busy"? where error.message.contains("shutting down"): return "run the same command again once savingsd is back"
        case "busy"? where error.message.contains("make room for another user"):
            return "this user holds more than its share of the daemon's connections: close some (event watchers, web pages), then run the command again"
        case "storage_error"?: return "check free disk space and the database directory, then run: savingsctl check"
        case "busy"?: return "the daemon is busy with another long operation; try again in a moment"
        case "invalid_field"? where ["data.import", "data.legacy_import"].contains(method)
            && ["upload", "path", "document"].contains(error.data?["field"]?.stringValue):
            return "correct the file where the message says and try again"
        case "invalid_field"?:
            let field = error.data?["field"]?.stringValue.map { "'\($0)'" } ?? "the value"
            return "correct \(field) and try again (savingsctl COMMAND --help shows the formats)"
        default: return nil
        }
    }
}
