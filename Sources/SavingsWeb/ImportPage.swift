import Foundation
import Hummingbird
import SavingsCore
import SavingsRPC
import Synchronization

/// Files picked in the browser, kept between the check (a dry run) and the import, in memory
/// only: at most `maxTotalBytes` in all, each for half an hour, the oldest dropped first.
final class PendingFiles: Sendable {
    struct File: Sendable {
        var name: String
        var bytes: [UInt8]
        var kept: ContinuousClock.Instant
    }

    static let maxFileBytes = 32 * 1024 * 1024
    static let maxTotalBytes = 64 * 1024 * 1024
    static let lifetime = Duration.seconds(1_800)

    private let files = Mutex<[String: File]>([:])

    /// Keeps a file; its id (128 random bits) names it in the next forms.
    func keep(name: String, bytes: [UInt8], now: ContinuousClock.Instant = .now) -> String {
        var generator = SystemRandomNumberGenerator()
        let id = String(format: "%016llx%016llx", generator.next() as UInt64, generator.next() as UInt64)
        files.withLock { files in
            files = files.filter { now - $0.value.kept < Self.lifetime }
            var total = files.values.reduce(bytes.count) { $0 + $1.bytes.count }
            for (old, file) in files.sorted(by: { $0.value.kept < $1.value.kept }) where total > Self.maxTotalBytes {
                files[old] = nil
                total -= file.bytes.count
            }
            files[id] = File(name: name, bytes: bytes, kept: now)
        }
        return id
    }

    func file(_ id: String, now: ContinuousClock.Instant = .now) -> File? {
        files.withLock { files in files[id].flatMap { now - $0.kept < Self.lifetime ? $0 : nil } }
    }

    func forget(_ id: String) { _ = files.withLock { $0.removeValue(forKey: id) } }
}

/// How a kept file is to be read and where its rows go, as the forms carry it.
struct ImportChoice: Sendable, Equatable {
    /// The kept file's id.
    var file: String
    /// An asset's id or name; empty when the rules name each row's asset.
    var asset: String
    /// "detect", "" (savingsd's own columns) or a preset's name.
    var rules: String
    /// The file's asset codes mapped to assets.
    var map: [String: String] = [:]

    init(file: String, asset: String, rules: String, map: [String: String] = [:]) {
        self.file = file
        self.asset = asset
        self.rules = rules
        self.map = map
    }

    /// From a form's fields (`map.CODE` for a code's asset); a rules value that is no preset
    /// (a path on the daemon's side) is not taken.
    init(_ field: (String) -> String?, mapped: [String: String]) {
        file = field("file") ?? ""
        asset = field("asset") ?? ""
        let rules = field("rules") ?? "detect"
        self.rules = rules == "detect" || rules.isEmpty || ImportPresets.names.contains(rules) ? rules : "detect"
        map = mapped.filter { !$0.value.isEmpty }
    }

    /// `tx.import`'s params for this choice (the file sent separately).
    var params: [String: JSONValue] {
        var params: [String: JSONValue] = [:]
        if !asset.isEmpty { params["asset"] = .string(asset) }
        if !rules.isEmpty, rules != "detect" { params["rules"] = .string(rules) }
        if !map.isEmpty { params["assets"] = .object(map.mapValues { .string($0) }) }
        return params
    }

    /// The hidden fields that carry it to the next form.
    var hidden: [[String: String]] {
        [["name": "file", "value": file], ["name": "asset", "value": asset], ["name": "rules", "value": rules]]
            + map.sorted { $0.key < $1.key }.map { ["name": "map.\($0.key)", "value": $0.value] }
    }
}

/// An import from the browser (`tx.import`): a file picked, how to read it chosen or found
/// from its header, a dry run shown as tables, then the import confirmed.
extension Pages {
    static let presetChoices: [(value: String, label: String)] =
        [("detect", "Find out from the file"), ("", "savingsd's own columns: date, amount, note, external_id")]
        + ImportPresets.names.map { ($0, PresetProbe.title($0)) }

    func importForm(assets: JSONValue, csrf: String, done: [String: String] = [:], entered: [String: String] = [:], problem: String? = nil) -> String {
        let chosenAsset = entered["asset"] ?? "", chosenRules = entered["rules"] ?? "detect"
        var context: [String: Any] = [
            "csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil,
            "assets": (assets["assets"]?.arrayValue ?? []).map { asset -> [String: Any] in
                let id = asset["id"]?.stringValue ?? ""
                return ["id": id, "name": asset["name"]?.stringValue ?? "", "selected": id == chosenAsset]
            },
            "rows": chosenAsset.isEmpty,
            "presets": Self.presetChoices.map { ["value": $0.value, "label": $0.label, "selected": $0.value == chosenRules] },
            "maxMiB": PendingFiles.maxFileBytes >> 20,
        ]
        if let imported = done["imported"] {
            context["done"] = "Imported \(imported) \(imported == "1" ? "row" : "rows") of \(done["name"].map { "“\($0)”" } ?? "the file")"
                + "; \(done["already"] ?? "0") already present, \(done["skipped"] ?? "0") skipped."
        }
        return page(body: render("importForm", context), title: "Import")
    }

    static let importFormTemplate = """
        <h1>Import transactions</h1>
        {{#done}}<p class="banner" role="status">{{done}}</p>{{/done}}
        {{#hasProblem}}<p class="problem" role="alert">{{problem}}</p>{{/hasProblem}}
        <p>A bank's or an exchange's export, or a file of savingsd's own columns. You see what it holds before anything is written;
        a file imported twice adds nothing the second time.</p>
        <form method="post" action="/import" enctype="multipart/form-data">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <p><label for="file">File</label><br><input id="file" name="file" type="file" required accept=".csv,.txt,text/csv,text/plain"
           aria-describedby="file-help"> <small id="file-help">CSV, at most {{maxMiB}} MiB</small></p>
        <p><label for="rules">How to read it</label><br><select id="rules" name="rules">{{#presets}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/presets}}</select></p>
        <p><label for="asset">Into</label><br><select id="asset" name="asset" aria-describedby="asset-help">
        <option value=""{{#rows}} selected{{/rows}}>the asset each row names</option>
        {{#assets}}<option value="{{id}}"{{#selected}} selected{{/selected}}>{{name}}</option>{{/assets}}</select>
        <small id="asset-help">an exchange's export names each row's coin; a bank's goes into one account</small></p>
        <p><button type="submit">Check the file</button></p>
        </form>
        <section aria-labelledby="backup-h"><h2 id="backup-h">Backup and export</h2>
        <p><a href="/download/backup">Download a backup</a><br><small>the whole database as it is now (an SQLite file), to keep somewhere safe</small></p>
        <p><a href="/download/export">Download an export</a><br><small>everything as one JSON document, for other programs or another savingsd</small></p>
        </section>
        """

    /// Several presets read the file's header (Binance's deposits and withdrawals share it):
    /// the person says which.
    func importPick(_ choice: ImportChoice, presets: [String], fileName: String, csrf: String) -> String {
        let context: [String: Any] = [
            "csrf": csrf, "fileName": fileName, "hidden": choice.hidden.filter { $0["name"] != "rules" },
            "presets": presets.enumerated().map { ["value": $0.element, "label": PresetProbe.title($0.element), "checked": $0.offset == 0, "index": $0.offset] },
        ]
        return page(body: render("importPick", context), title: "Import: which file is it?")
    }

    static let importPickTemplate = """
        <h1>Which file is “{{fileName}}”?</h1>
        <form method="post" action="/import/check">
        <input type="hidden" name="csrf" value="{{csrf}}">{{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}
        <fieldset><legend>Its header is that of each of these; the file says which it holds</legend>
        {{#presets}}<p><input type="radio" id="rules-{{index}}" name="rules" value="{{value}}"{{#checked}} checked{{/checked}}>
        <label for="rules-{{index}}">{{label}}</label></p>{{/presets}}</fieldset>
        <p><button type="submit">Check the file</button> <a href="/import">Start again</a></p>
        </form>
        """

    /// The dry run as tables: each asset's rows and total, the first rows as they would be
    /// stored, the problems, the codes without an asset; then Import (or only the good rows).
    func importCheck(_ result: JSONValue, choice: ImportChoice, fileName: String, assets: JSONValue, csrf: String) -> String {
        let text = { (value: JSONValue?) in value?.stringValue ?? "" }
        let number = { (value: JSONValue?) in value?.intValue ?? 0 }
        let problems = (result["problems"]?.arrayValue ?? []).map { ["line": String(number($0["line"])), "reason": text($0["reason"])] }
        // Codes without an asset: rows refused for them (the rules' unmapped = "error") or left out ("skip").
        let unmapped = (result["codes_without_asset"]?.objectValue ?? [:]).merging(result["unmapped"]?.objectValue ?? [:]) { a, _ in a }
            .sorted { $0.key < $1.key }
        let assetList = (assets["assets"]?.arrayValue ?? []).map { ["id": text($0["id"]), "name": text($0["name"])] }
        let rows = number(result["rows"]), toImport = number(result["imported"]), already = number(result["already_present"])
        let skipped = number(result["skipped"]), problemCount = number(result["problem_count"])
        let refused = result["refused"]?.boolValue == true
        let rulesLabel = Self.presetChoices.first { $0.value == choice.rules }?.label ?? choice.rules
        let context: [String: Any] = [
            "csrf": csrf, "fileName": fileName, "rules": rulesLabel, "hidden": choice.hidden,
            "summary": "\(rows) \(rows == 1 ? "row" : "rows"): \(toImport) to import, \(already) already present, \(skipped) skipped"
                + (problemCount > 0 ? ", \(problemCount) with problems" : "") + ".",
            "perAsset": (result["assets"]?.arrayValue ?? []).map { summary -> [String: String] in
                ["name": text(summary["name"]), "rows": String(number(summary["rows"])), "imported": String(number(summary["imported"])),
                 "total": Self.money(summary["total"]), "already": String(number(summary["already_present"]))]
            },
            "preview": (result["preview"]?.arrayValue ?? []).map { row -> [String: Any] in
                ["line": String(number(row["line"])), "date": HumanTime.describe(text(row["date"])), "amount": Self.money(row["amount"]),
                 "note": text(row["note"]), "asset": text(row["asset"]), "already": row["already_present"]?.boolValue == true]
            },
            "hasPreview": !(result["preview"]?.arrayValue ?? []).isEmpty, "hasPerAsset": !(result["assets"]?.arrayValue ?? []).isEmpty,
            "problems": problems, "hasProblems": !problems.isEmpty, "moreProblems": problemCount > problems.count ? String(problemCount - problems.count) : "",
            "unmapped": unmapped.enumerated().map { index, entry -> [String: Any] in
                ["code": entry.key, "rows": String(entry.value.intValue ?? 0), "index": index,
                 "assets": assetList.map { ["id": $0["id"]!, "name": $0["name"]!, "selected": choice.map[entry.key] == $0["id"]] }]
            },
            "hasUnmapped": !unmapped.isEmpty,
            "canImport": !refused && toImport > 0, "onlyGood": refused && toImport > 0 && problemCount > 0,
            "good": String(toImport), "nothing": toImport == 0 && !refused,
        ]
        return page(body: render("importCheck", context), title: "Import: check")
    }

    static let importCheckTemplate = """
        <h1>“{{fileName}}” as it would be imported</h1>
        <p>Read as: {{rules}}. Nothing is written yet. <a href="/import">Start again</a></p>
        <p role="status">{{summary}}</p>
        {{#hasProblems}}<section aria-labelledby="problems-h"><h2 id="problems-h">Problems</h2>
        <ul class="problems">{{#problems}}<li>line {{line}}: {{reason}}</li>{{/problems}}</ul>
        {{#moreProblems}}<p>and {{moreProblems}} more</p>{{/moreProblems}}</section>{{/hasProblems}}
        {{#hasUnmapped}}<section aria-labelledby="unmapped-h"><h2 id="unmapped-h">Coins without an asset</h2>
        <p>Rows of these codes are left out until each is given an asset.</p>
        <form method="post" action="/import/check"><input type="hidden" name="csrf" value="{{csrf}}">
        {{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}
        {{#unmapped}}<p><label for="map-{{index}}">{{code}} ({{rows}} rows)</label><br><select id="map-{{index}}" name="map.{{code}}">
        <option value="">leave out</option>{{#assets}}<option value="{{id}}"{{#selected}} selected{{/selected}}>{{name}}</option>{{/assets}}</select></p>{{/unmapped}}
        <p><button type="submit">Check again</button> <a href="/assets/new">New asset</a></p></form></section>{{/hasUnmapped}}
        {{#hasPerAsset}}<div class="scroll" role="region" aria-labelledby="totals-h" tabindex="0"><table><caption id="totals-h">Per asset</caption>
        <thead><tr><th scope="col">Asset</th><th scope="col" class="num">Rows</th><th scope="col" class="num">To import</th><th scope="col" class="num">Already there</th><th scope="col" class="num">Sum</th></tr></thead>
        <tbody>{{#perAsset}}<tr><th scope="row">{{name}}</th><td class="num">{{rows}}</td><td class="num">{{imported}}</td><td class="num">{{already}}</td><td class="num">{{total}}</td></tr>{{/perAsset}}</tbody>
        </table></div>{{/hasPerAsset}}
        {{#hasPreview}}<div class="scroll" role="region" aria-labelledby="preview-h" tabindex="0"><table><caption id="preview-h">The first rows</caption>
        <thead><tr><th scope="col" class="num">Line</th><th scope="col">When</th><th scope="col" class="num">Amount</th><th scope="col">Asset</th><th scope="col">Note</th></tr></thead>
        <tbody>{{#preview}}<tr><th scope="row" class="num">{{line}}</th><td>{{date}}</td><td class="num">{{amount}}</td><td>{{asset}}</td><td>{{note}}{{#already}} <small>(already there)</small>{{/already}}</td></tr>{{/preview}}</tbody>
        </table></div>{{/hasPreview}}
        {{#canImport}}<form method="post" action="/import/confirm"><input type="hidden" name="csrf" value="{{csrf}}">
        {{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}
        <p><button type="submit">Import {{good}} rows</button></p></form>{{/canImport}}
        {{#onlyGood}}<form method="post" action="/import/confirm"><input type="hidden" name="csrf" value="{{csrf}}">
        {{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}<input type="hidden" name="partial" value="true">
        <p><button type="submit">Import the {{good}} good rows, leave the rest</button></p></form>{{/onlyGood}}
        {{#nothing}}<p>Nothing new to import.</p>{{/nothing}}
        """
}

extension Screens {
    func addImport(to router: Router<BasicRequestContext>) {
        router.get("/import") { request, _ in
            await importForm(done: Self.query(request))
        }
        // The file itself (multipart; the guard has read and bounded the body).
        router.post("/import") { request, _ in
            var request = request
            let body: [UInt8]
            do {
                body = Array(buffer: try await request.collectBody(upTo: Multipart.maxBodyBytes))
            } catch {
                return await importForm(problem: "The file is larger than \(PendingFiles.maxFileBytes >> 20) MiB.", status: .contentTooLarge)
            }
            guard let boundary = Multipart.boundary(contentType: request.headers[.contentType]),
                  let form = try? Multipart(body, boundary: boundary), let file = form["file"] else {
                return await importForm(problem: "The form came without its file; pick the file and send it again.", status: .badRequest)
            }
            guard file.content.count <= PendingFiles.maxFileBytes else {
                return await importForm(problem: "The file is larger than \(PendingFiles.maxFileBytes >> 20) MiB.", status: .contentTooLarge)
            }
            guard !file.content.isEmpty else {
                return await importForm(entered: ["asset": form.text("asset") ?? "", "rules": form.text("rules") ?? ""],
                                        problem: "The file is empty; pick the export itself.", status: .unprocessableContent)
            }
            let name = String((file.filename ?? "the file").suffix(200))
            let id = pending.keep(name: name, bytes: Array(file.content))
            return await check(ImportChoice({ $0 == "file" ? id : form.text($0) }, mapped: [:]))
        }
        router.post("/import/check") { request, _ in
            guard let form = await Self.form(request) else { return await importForm(problem: "The form is larger than 64 KiB.", status: .contentTooLarge) }
            return await check(ImportChoice({ form[$0] }, mapped: form.prefixed("map.")))
        }
        router.post("/import/confirm") { request, _ in
            guard let form = await Self.form(request) else { return await importForm(problem: "The form is larger than 64 KiB.", status: .contentTooLarge) }
            let choice = ImportChoice({ form[$0] }, mapped: form.prefixed("map."))
            guard let file = pending.file(choice.file) else { return await importForm(problem: Self.expired, status: .gone) }
            var params = choice.params
            if form["partial"] == "true" { params["partial"] = true }
            do {
                let result = try await daemon.upload("tx.import", params, file: file.bytes)
                pending.forget(choice.file)
                let done = ["imported": result["imported"], "already": result["already_present"], "skipped": result["skipped"]]
                    .map { "\($0.key)=\($0.value?.intValue ?? 0)" }.sorted().joined(separator: "&")
                return Response(status: .seeOther, headers: [.location: "/import?\(done)&name=\(Self.queryText(file.name))"])
            } catch {
                return await importForm(entered: ["asset": choice.asset, "rules": choice.rules], problem: DaemonLink.Failure.of(error).message,
                                        status: Self.status(DaemonLink.Failure.of(error)))
            }
        }
    }

    static let expired = "The file picked is no longer kept (after half an hour, or once imported); pick it again."

    /// A dry run of the kept file as `choice` reads it; where the rules are to be found out,
    /// the presets whose header the file has (one: it; several: the person picks; none:
    /// savingsd's own columns).
    func check(_ choice: ImportChoice) async -> Response {
        guard let file = pending.file(choice.file) else { return await importForm(problem: Self.expired, status: .gone) }
        var choice = choice
        if choice.rules == "detect" {
            let found = PresetProbe.matching(Array(file.bytes.prefix(PresetProbe.prefixBytes)), now: Date(), timeZone: .current)
            if found.count > 1 {
                return WebServer.html(pages.importPick(choice, presets: found, fileName: file.name, csrf: csrf))
            }
            choice.rules = found.first ?? ""
        }
        var params = choice.params
        params["dry_run"] = true
        do {
            async let assets = daemon.call("asset.list")
            let result = try await daemon.upload("tx.import", params, file: file.bytes)
            return WebServer.html(pages.importCheck(result, choice: choice, fileName: file.name, assets: try await assets, csrf: csrf))
        } catch {
            return await importForm(entered: ["asset": choice.asset, "rules": choice.rules], problem: DaemonLink.Failure.of(error).message,
                                        status: Self.status(DaemonLink.Failure.of(error)))
        }
    }

    func importForm(done: [String: String] = [:], entered: [String: String] = [:], problem: String? = nil,
                    status: HTTPResponse.Status = .ok) async -> Response {
        do {
            let assets = try await daemon.call("asset.list")
            return WebServer.html(pages.importForm(assets: assets, csrf: csrf, done: done, entered: entered, problem: problem), status: status)
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }

    /// A posted urlencoded form, nil past its size.
    static func form(_ request: Request) async -> Form? {
        var request = request
        guard let body = try? await request.collectBody(upTo: Form.maxBytes) else { return nil }
        return Form(String(buffer: body))
    }
}

/// A backup (`db.backup`) or an export (`data.export`) downloaded: the daemon's file passed to
/// the browser as it comes, with its size first; nothing of it kept here.
extension Screens {
    func addData(to router: Router<BasicRequestContext>) {
        router.get("/download/backup") { _, _ in
            await download("db.backup", name: "savings-backup", suffix: "sqlite", type: "application/vnd.sqlite3")
        }
        router.get("/download/export") { _, _ in
            await download("data.export", name: "savings-export", suffix: "json", type: "application/json")
        }
    }

    func download(_ method: String, name: String, suffix: String, type: String) async -> Response {
        let started: DaemonLink.Download
        do {
            started = try await daemon.download(method)
        } catch {
            return WebServer.problem(error, pages: pages)
        }
        let day = TransactionDay.day(of: Timestamp.format(Date())) ?? "today"
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.contentDisposition] = "attachment; filename=\"\(name)-\(day).\(suffix)\""
        let body = ResponseBody(contentLength: started.bytes) { writer in
            // The browser gone or the daemon's answer an error: the download stops, and the
            // browser, short of the length it was told, keeps no file.
            started.read()
            defer { started.cancel() }
            for try await chunk in started.chunks { try await writer.write(chunk) }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }
}
