import Foundation
import SavingsRPC

/// How savingsctl shows a `tx.import`: what went in, per asset, and a dry run's preview.
extension Views {
    public static func importResult(_ result: JSONValue, style: Style = .plain) -> String {
        let dryRun = result["dry_run"] == true
        var sections: [String] = []
        if dryRun {
            let preview = result["preview"]?.arrayValue ?? []
            if !preview.isEmpty {
                var table = Table(headers: ["line", "asset", "date", "amount", "note", "external id", ""], rightAligned: [0, 3])
                table.rows = preview.map { row in
                    [Render.text(row["line"]), Render.text(row["asset"]), Render.text(row["date"]), Render.text(row["amount"]),
                     row["note"] == .null ? "" : Render.clipped(Render.text(row["note"]), 40), Render.clippedInside(Render.text(row["external_id"]), 24),
                     row["already_present"] == true ? style.dim("already present") : "new"]
                }
                sections.append("The first rows as they would be stored:\n" + table.rendered(style: style))
            }
        }
        let assets = result["assets"]?.arrayValue ?? []
        let unmapped = (result["unmapped"]?.objectValue ?? [:]).sorted { $0.key < $1.key }
        if assets.count > 1 || dryRun || !unmapped.isEmpty || (result["skipped"]?.intValue ?? 0) > 0 {
            var table = Table(headers: ["asset", "codes", "rows", dryRun ? "new" : "imported", "present", "skipped", "total", "balance"],
                              rightAligned: [2, 3, 4, 5, 6])
            table.rows = assets.map { asset in
                let codes = (asset["codes"]?.arrayValue ?? []).map { Render.text($0) }.joined(separator: ", ")
                return [Render.text(asset["name"]), codes, Render.text(asset["rows"]), Render.text(asset["imported"]),
                        Render.text(asset["already_present"]), Render.text(asset["skipped"]), Render.text(asset["total"]),
                        asset["balance_checked"] == true ? "checked" : "—"]
            }
            table.rows += unmapped.map { code, rows in
                [style.dim("(no asset)"), code, Render.text(rows), "0", "0", Render.text(rows), "", ""]
            }
            sections.append(table.rendered(style: style))
        }
        let verb = dryRun ? "would be imported" : "imported"
        sections.append("\(Render.text(result["imported"])) \(verb), \(Render.text(result["already_present"])) already present, "
            + "\(Render.text(result["skipped"])) skipped (\(Render.text(result["rows"])) rows; "
            + "\(Render.text(result["auto_allocated"])) allocated automatically)")
        var problems = (result["problems"]?.arrayValue ?? []).map { "line \(Render.text($0["line"])): \(Render.text($0["reason"]))" }
        if let count = result["problem_count"]?.intValue, count > problems.count { problems.append("and \(count - problems.count) more") }
        if !problems.isEmpty { sections.append(style.yellow("problems:") + "\n" + problems.joined(separator: "\n")) }
        if dryRun {
            sections.append(result["refused"] == true
                ? style.yellow("Dry run: nothing was written; as it stands the file would be refused.")
                : "Dry run: nothing was written. Run it again without --dry-run to import.")
        }
        return sections.joined(separator: "\n\n")
    }
}
