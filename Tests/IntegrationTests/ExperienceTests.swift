import Foundation
import SavingsRPC
import Testing

/// Runs `command` under a pseudo-terminal (util-linux `script`), as a person at a terminal
/// would; standard output and error arrive together.
func runOnTerminal(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
    let quoted = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
    let result = try runCtl(["-qec", quoted, "/dev/null"], environment: ["TERM": "xterm"].merging(environment) { $1 },
                            executable: "/usr/bin/script")
    return (result.status, result.stdout)
}

/// The experience around the daemon: the demo, the overview, colour rules, --json, hints,
/// progress on a terminal.
@Suite struct ExperienceTests {
    @Test func demoFillsAnEmptyDatabaseOnlyOnce() throws {
        let daemon = try DaemonProcess()
        let socket = ["--socket", daemon.socketPath]
        let first = try runCtl(socket + ["demo"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("demo loaded: 4 goals, 4 assets"))
        let month = try daemon.call("month.progress")
        #expect(month["status"] == "executing")
        #expect((month["goals"]?.arrayValue ?? []).contains { $0["fulfilled"] == true })
        #expect(try daemon.call("month.history")["months"]?.arrayValue?.count == 5)
        #expect(try daemon.call("db.check")["ok"] == true)

        let again = try runCtl(socket + ["demo"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("not empty") && again.stderr.contains("[conflict]"))
        #expect(try daemon.call("goal.list")["goals"]?.arrayValue?.count == 4)
    }

    @Test func overviewWithoutArguments() throws {
        let daemon = try DaemonProcess()
        let socket = ["--socket", daemon.socketPath]
        #expect(try ok(socket, []).contains("savingsctl demo"))
        _ = try ok(socket, ["demo"])
        let overview = try ok(socket, [])
        #expect(overview.contains("executing  ["))
        #expect(overview.contains("1,960.00 EUR planned"))
        #expect(overview.contains("next: "))
        // Without a daemon: the usage, then how to start one (exit 3).
        let down = try runCtl(["--socket", daemon.directory + "/nothing.sock"])
        #expect(down.status == 3)
        #expect(down.stdout.contains("USAGE"))
        #expect(down.stderr.contains("savingsd"))
    }

    @Test func jsonIsExactlyTheRPCResult() throws {
        let daemon = try DaemonProcess()
        let socket = ["--socket", daemon.socketPath]
        _ = try ok(socket, ["demo"])
        let cases: [([String], String, [String: JSONValue])] = [
            (["goal", "list"], "goal.list", [:]), (["goal", "show", "Japan trip"], "goal.get", ["goal": "Japan trip"]),
            (["asset", "list"], "asset.list", [:]), (["month", "status"], "month.progress", [:]),
            (["month", "history"], "month.history", [:]), (["plan", "list"], "plan.list", [:]),
            (["alloc", "list"], "allocation.list", [:]),
        ]
        for (arguments, method, params) in cases {
            let printed = try JSONParser.parse(try ok(socket, arguments + ["--json"]))
            #expect(printed == (try daemon.call(method, params)), "\(arguments)")
        }
    }

    @Test func colourOnlyOnATerminalAndNeverWithNoColorOrJSON() throws {
        let daemon = try DaemonProcess()
        let socket = ["--socket", daemon.socketPath]
        _ = try ok(socket, ["demo"])
        let escape = "\u{1B}["
        #expect(!(try ok(socket, ["dashboard"])).contains(escape), "a pipe gets no colour")
        let terminal = try runOnTerminal([Binaries.savingsctl] + socket + ["dashboard"])
        #expect(terminal.status == 0)
        #expect(terminal.output.contains(escape), "a terminal gets colour")
        #expect(!(try runOnTerminal([Binaries.savingsctl] + socket + ["dashboard"], environment: ["NO_COLOR": "1"])).output.contains(escape))
        #expect(!(try runOnTerminal([Binaries.savingsctl] + socket + ["dashboard", "--json"])).output.contains(escape))
    }

    @Test func errorsSayWhatToDoNext() throws {
        let daemon = try DaemonProcess()
        let socket = ["--socket", daemon.socketPath]
        let missing = try runCtl(socket + ["goal", "show", "Nope"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("next: see the goals with: savingsctl goal list"))
        let month = try runCtl(socket + ["month", "complete"])
        #expect(month.stderr.contains("next: "))
        let rate = try runCtl(socket + ["rates", "convert", "1", "BTC", "EUR"])
        #expect(rate.status == 1)
        #expect(rate.stderr.contains("savingsctl rates set"))
    }

    @Test func longOperationsShowProgressOnATerminal() throws {
        let daemon = try DaemonProcess()
        let socket = ["--socket", daemon.socketPath]
        _ = try ok(socket, ["demo"])
        let backup = try runOnTerminal([Binaries.savingsctl] + socket + ["backup", daemon.directory + "/copy.db"])
        #expect(backup.status == 0)
        #expect(backup.output.contains("] ") && backup.output.contains(" pages"), "\(backup.output)")
        #expect(backup.output.contains("backup written to"))
        // Through a pipe: no progress line at all.
        let piped = try runCtl(socket + ["backup", daemon.directory + "/copy2.db"])
        #expect(!piped.stderr.contains("pages"))

        // Export progress comes every 5,000 rows: import enough transactions first.
        let csv = daemon.directory + "/many.csv"
        var text = "date,amount,note\n"
        for index in 0..<6_000 { text += "2026-01-\(String(format: "%02d", index % 28 + 1)),1.00,row \(index)\n" }
        try text.write(toFile: csv, atomically: true, encoding: .utf8)
        _ = try ok(socket, ["tx", "import", "Savings account", csv])
        let export = try runOnTerminal([Binaries.savingsctl] + socket + ["export", daemon.directory + "/all.json"])
        #expect(export.status == 0)
        #expect(export.output.contains("rows") && export.output.contains("transactions"), "\(export.output)")
    }
}
