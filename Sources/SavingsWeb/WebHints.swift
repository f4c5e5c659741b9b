import SavingsCLI
import SavingsRPC

/// A refusal as the page says it: the daemon's message and kind, then a next step a person in a
/// browser can take (a screen, a field), never a command for a terminal.
enum WebHints {
    static func message(for error: RPCError, method: String) -> String {
        var text = error.message
        if let kind = error.kind { text += " [\(kind)]" }
        if let hint = hint(for: error, method: method) { text += "\n  next: " + hint }
        return text
    }

    static func hint(for error: RPCError, method: String) -> String? {
        switch error.code {
        case RPCError.invalidParamsCode: return "correct the field the message names and send the form again"
        case RPCError.internalErrorCode: return "savingsd logged the details; please report it"
        default: break
        }
        switch error.kind {
        case "not_found"?: return "the Dashboard lists the goals and the Assets screen the assets; start again from there"
        case "ambiguous"?: return "two share that name: pick the one you mean from its own screen"
        case "invalid_amount"?: return "write the amount as a plain decimal with a point, e.g. 1250.50"
        case "insufficient_balance"?: return "record the money as saved first, or use less"
        case "conflict"? where method == "tx.update": return "undo the contribution on the goal's page, then record it again as it should be"
        case "conflict"? where method.hasPrefix("tx."): return "the transaction is there already; find it with the search on the asset's transactions"
        case "conflict"?: return "pick another name"
        case "watched_asset"? where error.message.contains("account"):
            return "this asset takes its transactions from its linked account: sync it on its linked account's page, or end the link there first"
        case "watched_asset"?: return "this asset takes its transactions from the chain: sync it on its On-chain page, or stop watching it there first"
        case "invalid_watch"?: return "check the key or addresses against your wallet (same chain, no typing error) and send the form again"
        case "not_configured"? where method == "asset.link": return "savingsd needs a credentials directory in its configuration; ask whoever runs savingsd"
        case "not_configured"?: return "the chain needs a block explorer in savingsd's configuration; ask whoever runs savingsd"
        case "provider_unavailable"? where error.message.contains("key") || error.message.contains("credential"):
            return "the service refused the key: check the credential file named on this page, then sync again"
        case "provider_unavailable"?: return "the service did not answer; savingsd tries again by itself, or sync later"
        case "too_large"?: return "choose a smaller file, or split it"
        case "plan_locked"?: return "the month is running or closed: on the Month screen, return it to draft while its undo is offered"
        case "invalid_state"?: return "the Month screen shows where the month stands and what can be done"
        case "rate_unavailable"?: return "savingsd has no rate for this currency yet; the figure follows once it has fetched one"
        case "read_only"?, "permission_denied"?: return "your user may only look; ask whoever runs savingsd for write access"
        case "busy"?: return "savingsd is busy; send the form again in a moment"
        default:
            // Savingsctl's own step where it names no command.
            guard let hint = Hints.hint(for: error, method: method), !hint.contains("savingsctl"), !hint.contains("journalctl") else { return nil }
            return hint
        }
    }
}
