import ArgumentParser
import Foundation
import SavingsCLI
import SavingsCore
import SavingsRPC

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "Write a self-contained HTML report with charts (no scripts, no network).")
    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Write the HTML page here.", valueName: "file")) var html: String

    func run() throws {
        let session = try ClientSession(global)
        let plans = try session.call("plan.list")
        let input = HTMLReport.Input(
            dashboard: try session.call("dashboard.get"), history: try session.call("month.history"),
            current: try session.callIfFound("month.progress"), plans: plans, assets: try session.call("asset.list"),
            allocations: try session.call("allocation.list"), rates: try session.call("rates.list"),
            generatedAt: Render.time(.string(Timestamp.format(Date()))))
        let page = HTMLReport.render(input)
        do {
            try Data(page.utf8).write(to: URL(fileURLWithPath: html), options: .atomic)
        } catch {
            throw ClientFailure(message: "cannot write \(html): \(error.localizedDescription)\n  next: choose a writable path", exitCode: 1)
        }
        if global.json {
            print(JSONSerializer.pretty(["path": .string(absolute(html)), "bytes": .int(page.utf8.count)]))
        } else {
            print("report written to \(html) (\(page.utf8.count) bytes); open it in a browser")
        }
    }
}
