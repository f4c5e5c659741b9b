import Foundation
import Logging
import SavingsCore
import SavingsRPC
import SavingsStore

/// `data.legacy_import`: the earlier app's export, through SPEC section 8's steps.
enum LegacyMethods {
    /// Largest export of the earlier app read. Its document is read whole into a tree (about
    /// 25 times its size at worst), so the bound is kept near what the app wrote: a few
    /// megabytes for years of data.
    static let maxBytes = 16 << 20

    static func register(into registry: inout MethodRegistry, context: DaemonContext, logger: Logger) {
        let database = context.database
        registry.register(MethodSpec(
            "data.legacy_import", summary: "Import the earlier app's JSON export (after a backup; all or nothing; twice changes nothing).",
            params: [.optional("path", .string, "the export (\"format\": \"cryptosavings-legacy\"), a path on the daemon's side"),
                     Transfer.uploadParam("the export"),
                     .optional("dry_run", .boolean, "report what would happen without writing"),
                     ParamSpec.progress],
            result: ResultSpec("report", "{\"dry_run\", \"already_imported\", \"steps\", \"warnings\", \"inserted\", \"already_present\", \"backup\"?}",
                               schema: Schema.object([
                                   "dry_run": Schema.boolean,
                                   "already_imported": Schema.described(Schema.boolean, "this document was imported before: nothing is written again"),
                                   "steps": Schema.array(Schema.object(["name": Schema.string, "counts": Schema.ref("Counts")])),
                                   "warnings": Schema.array(Schema.string),
                                   "inserted": Schema.ref("Counts"), "already_present": Schema.ref("Counts"),
                                   "backup": Schema.described(Schema.string, "the backup made before writing into a database that held data"),
                               ], optional: ["backup"])), writes: true, transfer: .upload)) { params, call in
            let file = try await IncomingFile.take(params, call: call, method: "data.legacy_import", maxBytes: maxBytes, context: context)
            let data = try file.contents(maxBytes: maxBytes)
            // A problem of the document is the field's that brought it: `upload` or `path`.
            let (name, field, importFile) = (file.name, file.field, file.importFile)
            // Parsed off the serving pool: the tree is the document's to size.
            let document = try await OffPool.run {
                try ExportDocument.relabel(importFile) { try LegacyParser.parse(Array(data), name: name, field: field) }
            }
            let dryRun = params.bool("dry_run") ?? false
            var result: [String: JSONValue] = [:]
            if !dryRun, try await !database.isEmpty() {
                let backup = try await database.automaticBackup(reason: "before-legacy-import", policy: context.liveConfig.current.backupPolicy,
                                                                now: context.clock.now())
                result["backup"] = .string(backup.path)
            }
            let (plan, outcome) = try await ExportDocument.relabel(file.importFile) {
                try await importDocument(document, fingerprint: StableHash.hex128(String(decoding: data, as: UTF8.self)), dryRun: dryRun, context: context)
            }
            result["dry_run"] = .bool(dryRun)
            result["already_imported"] = .bool(outcome.alreadyImported)
            result["steps"] = .array(plan.steps.map { step in
                ["name": .string(step.name), "counts": .object(step.counts.mapValues { .int($0) })]
            })
            result["warnings"] = .array(plan.warnings.map(JSONValue.string))
            result["inserted"] = .object(outcome.inserted.mapValues { .int($0) })
            result["already_present"] = .object(outcome.alreadyPresent.mapValues { .int($0) })
            if !dryRun, !outcome.alreadyImported {
                logger.notice("legacy data imported", metadata: ["rows": "\(outcome.inserted.values.reduce(0, +))", "warnings": "\(plan.warnings.count)"])
            }
            return .object(result)
        }
    }

    /// `data.demo`: the example of `DemoData`, dated around now, into an empty database. The
    /// history enters as one import (all or nothing); the current month's deposits and
    /// reservations then go through the same store calls as `tx.add` and `allocation.set`.
    static func registerDemo(into registry: inout MethodRegistry, context: DaemonContext, logger: Logger) {
        let database = context.database
        registry.register(MethodSpec(
            "data.demo", summary: "Fill an empty database with an example: goals, crypto and fiat assets, closed months, an executing month.",
            result: ResultSpec("demo", "{\"goals\", \"assets\", \"transactions\", \"closed_months\", \"executing_month\"}",
                               schema: Schema.object([
                                   "goals": Schema.count, "assets": Schema.count, "transactions": Schema.count, "closed_months": Schema.count,
                                   "executing_month": Schema.month,
                               ])), writes: true)) { _, _ in
            guard try await database.isEmpty() else {
                throw DomainError(.conflict, "the database is not empty; the demo only fills an empty one (start savingsd with another --database)")
            }
            let now = context.clock.now()
            let demo = DemoData(now: now, timeZone: context.timeZone)
            let (plan, _) = try await importDocument(demo.document, fingerprint: "demo:" + Timestamp.format(now), dryRun: false, context: context)
            for rate in demo.rates {
                _ = try await database.recordRate(ExchangeRate(base: rate.base, quote: rate.quote, rate: rate.rate, asOf: now,
                                                               provider: "manual", fetchedAt: now))
            }
            for deposit in demo.deposits {
                _ = try await database.addTransaction(asset: deposit.asset, amount: deposit.amount, date: context.clock.now(),
                                                      note: deposit.note, externalID: nil, now: context.clock.now(), timeZone: context.timeZone)
            }
            for reservation in demo.reservations {
                _ = try await database.setAllocation(asset: reservation.asset, goal: reservation.goal, amount: reservation.amount,
                                                     now: context.clock.now(), timeZone: context.timeZone)
            }
            logger.notice("demo data loaded")
            return ["goals": .int(plan.goals.count), "assets": .int(plan.assets.count),
                    "transactions": .int(plan.transactions.count + demo.deposits.count),
                    "closed_months": .int(plan.months.filter(\.closed).count),
                    "executing_month": .string(MonthLabel(now, in: context.timeZone).description)]
        }
    }

    /// Plans `document` through SPEC section 8's steps and writes it in one transaction.
    static func importDocument(_ document: LegacyDocument, fingerprint: String, dryRun: Bool,
                               context: DaemonContext) async throws -> (LegacyImportPlan, LegacyImportOutcome) {
        let now = context.clock.now()
        let config = context.liveConfig.current
        let taken = try await context.database.takenNames()
        let plan = try LegacyImporter.plan(document, now: now, timeZone: config.timeZone, thresholds: config.thresholds,
                                           takenGoalNames: taken.goals, takenAssetNames: taken.assets)
        let display = config.displayCurrency
        let outcome = try await context.database.legacyImport(plan, fingerprint: fingerprint, dryRun: dryRun, now: now,
                                                              timeZone: config.timeZone) { month in
            render(month, display: display)
        }
        return (plan, outcome)
    }

    /// A month the earlier app executed, in the shape `month.complete` freezes. Totals are in the
    /// display currency only where every goal uses it; otherwise per goal only.
    static func render(_ month: LegacyImportPlan.Month, display: CurrencyCode) -> (snapshot: String, completed: String?) {
        let snapshot: JSONValue = ["goals": .array(month.lines.map { line in
            ["goal_id": Wire.id(line.goalID), "goal_name": .string(line.goalName), "currency": .string(line.currency.code),
             "planned": .string(Amount.plainText(line.planned)), "is_protected": .bool(line.isProtected), "is_skipped": .bool(line.isSkipped)]
        })]
        guard month.closed else { return (JSONSerializer.serialize(snapshot), nil) }
        let lines = month.lines.map {
            ExecutionProgress.Line(goalID: $0.goalID, goalName: $0.goalName, currency: $0.currency, planned: $0.planned, contributed: $0.contributed)
        }
        let sameCurrency = month.lines.allSatisfy { $0.currency == display }
        let planned = lines.reduce(Decimal(0)) { $0 + $1.planned }, contributed = lines.reduce(Decimal(0)) { $0 + $1.contributed }
        let frozen: JSONValue = [
            "month": .string(month.month.description), "status": "closed", "source": "legacy_import",
            "started_at": Wire.timestamp(month.startedAt), "completed_at": month.completedAt.map(Wire.timestamp) ?? .null,
            "can_undo_until": .null, "goals": .array(lines.map(ExecutionProgress.goal)),
            "totals": sameCurrency
                ? ["currency": .string(display.code), "planned": Wire.money(planned, display), "contributed": Wire.money(contributed, display),
                   "remaining": Wire.money(max(0, planned - contributed), display)]
                : .null,
            "events": [], "rates": [], "incomplete": .bool(!sameCurrency), "missing_rates": [],
        ]
        return (JSONSerializer.serialize(snapshot), JSONSerializer.serialize(frozen))
    }
}

/// Reads the legacy document, refusing anything malformed with the place and the reason.
enum LegacyParser {
    /// `name` is how messages call the file, `field` the parameter that brought it (`path` or `upload`).
    static func parse(_ bytes: [UInt8], name: String, field: String) throws -> LegacyDocument {
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw DomainError.invalidField(field, "\(name) is not a JSON document: \(error)")
        }
        guard root["format"]?.stringValue == "cryptosavings-legacy" else {
            throw DomainError.invalidField(field, "\(name) is not an export of the earlier app (\"format\": \"cryptosavings-legacy\" is missing)")
        }
        guard root["version"]?.intValue == 1 else { throw DomainError.invalidField(field, "legacy export version must be 1") }
        var document = LegacyDocument()
        document.exportedAt = try root["exported_at"].flatMap { try optionalInstant($0, "exported_at") }
        document.goals = try items(root, "goals") { item, at in
            LegacyDocument.Goal(id: try id(item, "id", at), name: try GoalRules.validName(try text(item, "name", at)),
                                currency: try CurrencyCode(try text(item, "currency", at), field: "\(at).currency"),
                                targetAmount: try positive(item, "target_amount", at), deadline: try day(item, "deadline", at),
                                startDate: try item["start_date"].flatMap { try optionalDay($0, "\(at).start_date") },
                                createdAt: try item["created_at"].flatMap { try optionalInstant($0, "\(at).created_at") })
        }
        document.assets = try items(root, "assets") { item, at in
            LegacyDocument.Asset(
                id: try id(item, "id", at), name: try GoalRules.validName(try text(item, "name", at)),
                currency: try CurrencyCode(try text(item, "currency", at), field: "\(at).currency"),
                createdAt: try item["created_at"].flatMap { try optionalInstant($0, "\(at).created_at") },
                balance: try item["balance"].flatMap { $0 == .null ? nil : try decimal($0, "\(at).balance") },
                transactions: try items(item, "transactions", prefix: at) { tx, where_ in
                    LegacyDocument.Transaction(id: try id(tx, "id", where_), amount: try decimal(tx["amount"], "\(where_).amount"),
                                               date: try instant(tx, "date", where_), source: tx["source"]?.stringValue)
                })
        }
        document.allocations = try items(root, "allocations") { item, at in
            LegacyDocument.Allocation(assetID: try id(item, "asset_id", at), goalID: try id(item, "goal_id", at),
                                      percentage: try decimal(item["percentage"], "\(at).percentage"))
        }
        document.executionRecords = try items(root, "execution_records") { item, at in
            LegacyDocument.ExecutionRecord(id: try id(item, "id", at), month: try MonthLabel(parsing: try text(item, "month_label", at), field: "\(at).month_label"),
                                           status: try text(item, "status", at),
                                           startedAt: try item["started_at"].flatMap { try optionalInstant($0, "\(at).started_at") },
                                           completedAt: try item["completed_at"].flatMap { try optionalInstant($0, "\(at).completed_at") })
        }
        document.plans = try items(root, "monthly_plans") { item, at in
            let label = item["month_label"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            return LegacyDocument.Plan(
                id: try id(item, "id", at), goalID: item["goal_id"]?.stringValue,
                month: try label.map { try MonthLabel(parsing: $0, field: "\(at).month_label") },
                requiredMonthly: try item["required_monthly"].flatMap { $0 == .null ? nil : try decimal($0, "\(at).required_monthly") } ?? 0,
                customAmount: try item["custom_amount"].flatMap { $0 == .null ? nil : try decimal($0, "\(at).custom_amount") },
                isProtected: item["is_protected"]?.boolValue ?? false, isSkipped: item["is_skipped"]?.boolValue ?? false,
                state: item["state"]?.stringValue,
                createdDate: try item["created_date"].flatMap { try optionalInstant($0, "\(at).created_date") },
                lastModified: try item["last_modified_date"].flatMap { try optionalInstant($0, "\(at).last_modified_date") },
                executionRecordID: item["execution_record_id"]?.stringValue, raw: JSONSerializer.serialize(item))
        }
        document.contributions = try items(root, "contributions") { item, at in
            let label = item["month_label"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            return LegacyDocument.Contribution(
                id: try id(item, "id", at), goalID: item["goal_id"]?.stringValue, assetID: item["asset_id"]?.stringValue,
                amount: try decimal(item["amount"], "\(at).amount"), date: try instant(item, "date", at),
                month: try label.map { try MonthLabel(parsing: $0, field: "\(at).month_label") },
                currency: try item["currency_code"]?.stringValue.map { try CurrencyCode($0, field: "\(at).currency_code") },
                sourceType: item["source_type"]?.stringValue, planID: item["plan_id"]?.stringValue, raw: JSONSerializer.serialize(item))
        }
        return document
    }

    private static func items<T>(_ object: JSONValue, _ key: String, prefix: String? = nil,
                                 _ body: (JSONValue, String) throws -> T) throws -> [T] {
        let name = prefix.map { "\($0).\(key)" } ?? key
        guard let value = object[key], value != .null else { return [] }
        guard let array = value.arrayValue else { throw DomainError.invalidField("document", "\(name) must be an array") }
        return try array.enumerated().map { index, item in
            guard case .object = item else { throw DomainError.invalidField("document", "\(name)[\(index)] must be an object") }
            do {
                return try body(item, "\(name)[\(index)]")
            } catch let error as DomainError where error.kind != .invalidField || !error.message.contains("\(name)[\(index)]") {
                throw DomainError.invalidField("document", "\(name)[\(index)]: \(error.message)")
            }
        }
    }

    private static func text(_ item: JSONValue, _ key: String, _ at: String) throws -> String {
        guard let value = item[key]?.stringValue, !value.isEmpty else { throw DomainError.invalidField("document", "\(at).\(key) is required") }
        return value
    }

    private static func id(_ item: JSONValue, _ key: String, _ at: String) throws -> String {
        if case .number(let literal)? = item[key] { return literal }
        return try text(item, key, at)
    }

    private static func decimal(_ value: JSONValue?, _ field: String) throws -> Decimal {
        switch value {
        case .number(let literal)?: return try Amount.parse(literal, field: field)
        case .string(let text)?: return try Amount.parse(text, field: field)
        default: throw DomainError.invalidField("document", "\(field) must be a number")
        }
    }

    private static func positive(_ item: JSONValue, _ key: String, _ at: String) throws -> Decimal {
        let value = try decimal(item[key], "\(at).\(key)")
        guard value > 0 else { throw DomainError.invalidField("document", "\(at).\(key) must be greater than zero") }
        return value
    }

    private static func instant(_ item: JSONValue, _ key: String, _ at: String) throws -> Date {
        guard let value = item[key], let date = try optionalInstant(value, "\(at).\(key)") else {
            throw DomainError.invalidField("document", "\(at).\(key) is required")
        }
        return date
    }

    /// ISO 8601 timestamps or plain dates (midnight UTC); null means absent.
    private static func optionalInstant(_ value: JSONValue, _ field: String) throws -> Date? {
        guard let text = value.stringValue else {
            if value == .null { return nil }
            throw DomainError.invalidField("document", "\(field) must be a date string")
        }
        if text.count == 10, let day = try? CalendarDate(parsing: text, field: field) {
            return try Timestamp.parse("\(day)T00:00:00Z", field: field)
        }
        do {
            return try Timestamp.parse(text, field: field)
        } catch {
            throw DomainError.invalidField("document", "\(field): '\(text)' is not a date")
        }
    }

    private static func day(_ item: JSONValue, _ key: String, _ at: String) throws -> CalendarDate {
        guard let value = item[key], let day = try optionalDay(value, "\(at).\(key)") else {
            throw DomainError.invalidField("document", "\(at).\(key) is required")
        }
        return day
    }

    private static func optionalDay(_ value: JSONValue, _ field: String) throws -> CalendarDate? {
        guard let text = value.stringValue else { return nil }
        if let day = try? CalendarDate(parsing: String(text.prefix(10)), field: field), text.count == 10 || text.dropFirst(10).first == "T" {
            return day
        }
        throw DomainError.invalidField("document", "\(field): '\(text)' is not a date")
    }
}
