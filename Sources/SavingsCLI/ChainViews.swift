import Foundation
import SavingsRPC

/// How savingsctl shows an asset's chain watch and a sync's outcome.
extension Views {
    /// The `watch` block of `asset show`.
    public static func watch(_ asset: JSONValue, style: Style = .plain, timeZone: TimeZone = .current) -> String? {
        guard let watch = asset["watch"], watch != .null else { return nil }
        let currency = asset["currency"]
        let what = watch["xpub"] != .null ? Render.text(watch["xpub"])
            : (watch["addresses"]?.arrayValue ?? []).map { Render.text($0) }.joined(separator: ", ")
        var lines = [style.dim("chain".rightPadded(to: 13)) + "\(Render.text(watch["chain"])) via \(Render.text(watch["provider"]))",
                     style.dim("watching".rightPadded(to: 13)) + what]
        if watch["token"] != .null { lines.append(style.dim("token".rightPadded(to: 13)) + Render.text(watch["token"])) }
        lines.append(style.dim("last sync".rightPadded(to: 13))
            + (watch["last_sync_at"] == .null ? "not yet" : Render.time(watch["last_sync_at"], in: timeZone))
            + (watch["height"] == .null ? "" : " (height \(Render.text(watch["height"])))"))
        if watch["reported_balance"] != .null {
            let agrees = watch["reconciled"] == true
            lines.append(style.dim("provider says".rightPadded(to: 13)) + Money.format(watch["reported_balance"], currency)
                + (agrees ? " (matches)" : " " + style.yellow("(differs from the stored balance)")))
        }
        if let error = watch["last_error"]?.stringValue { lines.append(style.dim("last error".rightPadded(to: 13)) + style.yellow(error)) }
        for pending in watch["pending"]?.arrayValue ?? [] {
            lines.append(style.dim("pending".rightPadded(to: 13)) + Money.format(pending["amount"], currency)
                + " (\(Render.text(pending["confirmations"])) confirmations, \(Render.text(pending["txid"]).prefix(16))…)")
        }
        return lines.joined(separator: "\n")
    }

    /// The dashboard's line about watched assets, when there are any.
    static func onchainLine(_ summary: JSONValue?, style: Style) -> String? {
        guard let summary, let watched = summary["watched"]?.intValue, watched > 0 else { return nil }
        var parts = ["\(watched) watched"]
        parts.append(summary["oldest_sync_at"] == .null ? "a first sync is due" : "synced " + Render.time(summary["oldest_sync_at"]))
        if let pending = summary["pending"]?.intValue, pending > 0 { parts.append("\(pending) pending") }
        let failing = (summary["failing"]?.arrayValue ?? []).map { Render.text($0) }
        if !failing.isEmpty { parts.append(style.yellow("sync failing: " + failing.joined(separator: ", "))) }
        let differs = (summary["unreconciled"]?.arrayValue ?? []).map { Render.text($0) }
        if !differs.isEmpty { parts.append(style.yellow("differs from the provider: " + differs.joined(separator: ", "))) }
        return parts.joined(separator: ", ")
    }

    /// `savingsctl asset sync`: one line per asset.
    public static func syncOutcome(_ result: JSONValue, style: Style = .plain) -> String {
        let assets = result["assets"]?.arrayValue ?? []
        guard !assets.isEmpty else {
            return "no asset watches a chain or is linked to an account (start with: savingsctl asset watch NAME --chain bitcoin --xpub …, "
                + "or savingsctl asset link NAME --service kraken --credential FILE)"
        }
        return assets.map { line in
            let name = Render.text(line["asset"]?["name"])
            if let error = line["error"]?.stringValue { return "\(name): " + style.yellow("sync failed: \(error)") }
            var parts = ["\(Render.text(line["added"])) added"]
            let removed = line["removed"]?.arrayValue?.count ?? 0
            let source = line["service"].map { serviceTitle($0) }
            if removed > 0 { parts.append("\(removed) removed (no longer \(source.map { "at " + $0 } ?? "on the chain"))") }
            let pending = line["pending"]?.arrayValue?.count ?? 0
            if pending > 0 { parts.append("\(pending) pending") }
            let balance = Render.text(line["balance"])
            let reconciled = line["reconciled"] == true ? "matches \(source ?? "the provider")"
                : style.yellow("\(source ?? "provider") says \(Render.text(line["reported_balance"]))")
            return "\(name): \(parts.joined(separator: ", ")); balance \(balance), \(reconciled)"
        }.joined(separator: "\n")
    }
}
