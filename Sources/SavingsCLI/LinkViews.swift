import Foundation
import SavingsCore
import SavingsRPC

/// How savingsctl shows an asset's linked account (an exchange's or a bank's).
extension Views {
    /// A service's name as a person calls it (`LinkedService.title`), or as the daemon wrote it.
    static func serviceTitle(_ value: JSONValue?) -> String {
        value?.stringValue.flatMap(LinkedService.init(rawValue:))?.title ?? Render.text(value)
    }

    /// The `link` block of `asset show`.
    public static func link(_ asset: JSONValue, style: Style = .plain, timeZone: TimeZone = .current) -> String? {
        guard let link = asset["link"], link != .null else { return nil }
        let service = serviceTitle(link["service"])
        var lines = [style.dim("linked to".rightPadded(to: 13)) + "\(service) \(Render.text(link["account"])) (credential \(Render.text(link["credential"])))",
                     style.dim("last sync".rightPadded(to: 13))
                        + (link["last_sync_at"] == .null ? "not yet" : Render.time(link["last_sync_at"], in: timeZone))
                        + (link["first_sync_unfinished"] == true ? style.yellow(" (the first sync is unfinished; it goes on at the next)") : "")]
        if link["reported_balance"] != .null {
            let agrees = link["reconciled"] == true
            lines.append(style.dim("\(service) says".rightPadded(to: 13)) + Money.format(link["reported_balance"], asset["currency"])
                + (agrees ? " (matches)" : " " + style.yellow("(differs from the stored balance)")))
        }
        if let error = link["last_error"]?.stringValue { lines.append(style.dim("last error".rightPadded(to: 13)) + style.yellow(error)) }
        return lines.joined(separator: "\n")
    }

    /// The dashboard's line about linked accounts, when there are any.
    static func linkedLine(_ summary: JSONValue?, style: Style) -> String? {
        guard let summary, let linked = summary["linked"]?.intValue, linked > 0 else { return nil }
        var parts = ["\(linked) linked"]
        parts.append(summary["oldest_sync_at"] == .null ? "a first sync is due" : "synced " + Render.time(summary["oldest_sync_at"]))
        let failing = (summary["failing"]?.arrayValue ?? []).map { Render.text($0) }
        if !failing.isEmpty { parts.append(style.yellow("sync failing: " + failing.joined(separator: ", "))) }
        let differs = (summary["unreconciled"]?.arrayValue ?? []).map { Render.text($0) }
        if !differs.isEmpty { parts.append(style.yellow("differs from the service: " + differs.joined(separator: ", "))) }
        return parts.joined(separator: ", ")
    }
}
