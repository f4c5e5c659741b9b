import Foundation
import SavingsRPC
import Testing

/// savingsctl end to end against a real daemon.
@Suite struct SavingsctlTests {
    @Test func goalCommandsAndExitCodes() throws {
        let daemon = try DaemonProcess()
        let socket = ["--socket", daemon.socketPath]

        let add = try runCtl(socket + ["goal", "add", "Emergency", "--target", "5000", "--currency", "EUR", "--deadline", "2027-06-30"])
        #expect(add.status == 0)
        #expect(add.stdout.contains("5,000.00 EUR"))

        let list = try runCtl(socket + ["goal", "list"])
        #expect(list.status == 0)
        #expect(list.stdout.contains("NAME"))
        #expect(list.stdout.contains("Emergency"))

        // --json before and after the subcommand prints the raw result.
        for arguments in [["--json"] + socket + ["goal", "list"], socket + ["goal", "list", "--json"], ["goal", "list", "--json"] + socket] {
            let json = try runCtl(arguments)
            #expect(json.status == 0)
            let parsed = try JSONParser.parse(json.stdout)
            #expect(parsed["goals"]?.arrayValue?.first?["name"] == "Emergency")
        }

        let edit = try runCtl(socket + ["goal", "edit", "emergency", "--target", "6000"])
        #expect(edit.status == 0)
        #expect(try daemon.call("goal.get", ["goal": "Emergency"])["target_amount"] == "6000.00")

        // 1: the daemon returned an error, its message on stderr.
        let missing = try runCtl(socket + ["goal", "show", "Nope"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no goal matches 'Nope'"))
        let duplicate = try runCtl(socket + ["goal", "add", "EMERGENCY", "--target", "1", "--currency", "EUR", "--deadline", "2027-06-30"])
        #expect(duplicate.status == 1)
        #expect(duplicate.stderr.contains("conflict"))

        // 2: usage.
        #expect(try runCtl(socket + ["goal", "add", "X"]).status == 2)
        #expect(try runCtl(socket + ["frobnicate"]).status == 2)
        #expect(try runCtl(socket + ["call", "goal.get", "not-a-pair"]).status == 2)
        #expect(try runCtl(socket + ["goal", "edit", "Emergency"]).status == 2)

        // call: any method, JSON object or key=value.
        let call = try runCtl(socket + ["call", "goal.get", "goal=Emergency"])
        #expect(call.status == 0)
        #expect(try JSONParser.parse(call.stdout)["target_amount"] == "6000.00")
        let object = try runCtl(socket + ["call", "goal.create", #"{"name":"Bike","currency":"EUR","target_amount":"900","deadline":"2027-03-31"}"#])
        #expect(object.status == 0)
        let status = try runCtl(socket + ["status"])
        #expect(status.status == 0)
        #expect(status.stdout.contains("goals=2"))

        #expect(try runCtl(socket + ["goal", "archive", "Bike"]).status == 0)
        #expect(try runCtl(socket + ["goal", "rm", "Bike"]).status == 0)
        #expect(try daemon.call("goal.list", ["include_archived": true])["goals"]?.arrayValue?.count == 1)
        #expect(try runCtl(["--help"]).status == 0)
    }

    @Test func fundingCommandsEndToEnd() throws {
        let daemon = try DaemonProcess()
        let socket = ["--socket", daemon.socketPath]
        _ = try ok(socket, ["goal", "add", "Emergency", "--target", "5000", "--currency", "EUR", "--deadline", "2027-06-30"])
        for amount in ["200", "300", "125", "100"] { _ = try ok(socket, ["contribute", "Emergency", amount]) }
        let contributed = try ok(socket, ["contribute", "Emergency", "1", "--json"])
        let id = try #require(try JSONParser.parse(contributed)["contribution_id"]?.stringValue)
        #expect(try ok(socket, ["undo-contribution", id]).contains("725.00"))
        #expect(try ok(socket, ["goal", "show", "Emergency"]).contains("[##------------------]  14.5%"))
        let dashboard = try ok(socket, ["dashboard"])
        #expect(dashboard.contains("725.00"))
        #expect(dashboard.contains("Emergency"))
        #expect(try JSONParser.parse(try ok(socket, ["dashboard", "--json"]))["totals"]?["goals_total"] == "725.00")

        _ = try ok(socket, ["asset", "add", "Cold", "--currency", "BTC", "--kind", "crypto"])
        #expect(try ok(socket, ["tx", "add", "Cold", "1.0", "--note", "first"]).contains("recorded 1.00000000"))
        _ = try ok(socket, ["goal", "add", "House", "--target", "100000", "--currency", "EUR", "--deadline", "2030-01-01"])
        #expect(try ok(socket, ["alloc", "set", "Cold", "House", "0.6"]).contains("unallocated: 0.40000000"))
        let refused = try runCtl(socket + ["alloc", "set", "Cold", "House", "1.5"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("insufficient_balance"))
        _ = try ok(socket, ["rates", "set", "BTC", "USD", "60000"])
        _ = try ok(socket, ["rates", "set", "EUR", "USD", "1.2"])
        #expect(try ok(socket, ["rates", "convert", "0.5", "BTC", "EUR"]).contains("25000.00 EUR"))
        #expect(try ok(socket, ["asset", "list"]).contains("50,000.00 EUR"))
        #expect(try ok(socket, ["alloc", "list", "--goal", "House"]).contains("0.60000000"))
        #expect(try ok(socket, ["tx", "list", "--asset", "Cold"]).contains("first"))
        #expect(try ok(socket, ["rates", "list"]).contains("BTC/USD"))
        let missing = try runCtl(socket + ["rates", "convert", "1", "SOL", "EUR"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("rate_unavailable"))
        #expect(try runCtl(socket + ["asset", "rm", "Cold"]).status == 1)
        _ = try ok(socket, ["asset", "rm", "Cold", "--force"])
    }

    @Test func planCommandsEndToEnd() throws {
        let daemon = try DaemonProcess()
        let socket = ["--socket", daemon.socketPath]
        _ = try ok(socket, ["goal", "add", "Emergency", "--target", "5000", "--currency", "EUR", "--deadline", "2030-06-30"])
        _ = try ok(socket, ["goal", "add", "Bike", "--target", "900", "--currency", "EUR", "--deadline", "2030-06-30"])
        let list = try ok(socket, ["plan", "list"])
        #expect(list.contains("Emergency") && list.contains("on_track"))
        #expect(try ok(socket, ["plan", "set", "Emergency", "--amount", "100"]).contains("100.00"))
        _ = try ok(socket, ["plan", "protect", "Emergency"])
        #expect(try ok(socket, ["plan", "flex", "--factor", "0.5"]).contains("preview only"))
        #expect(try ok(socket, ["plan", "flex", "--factor", "0.5", "--apply"]).contains("applied"))
        let bike = try JSONParser.parse(try ok(socket, ["plan", "show", "Bike", "--json"]))
        #expect(bike["flex_state"] == "flexible")
        #expect(bike["custom_amount"] != .null, "flex_apply wrote the flexible plan")
        #expect(try JSONParser.parse(try ok(socket, ["plan", "show", "Emergency", "--json"]))["custom_amount"] == "100.00", "protected stays")
        _ = try ok(socket, ["plan", "set", "Emergency", "--amount", "clear"])
        _ = try ok(socket, ["plan", "skip", "Bike"])
        #expect(try ok(socket, ["plan", "stale"]).contains("0 stale"))
        #expect(try runCtl(socket + ["plan", "flex", "--factor", "2"]).status == 1)
    }

    @Test func unreachableDaemonIsExitCodeThreeWithAHint() throws {
        let directory = try makeScratchDirectory()
        let result = try runCtl(["--socket", directory + "/none.sock", "status"])
        #expect(result.status == 3)
        #expect(result.stderr.contains("cannot reach savingsd"))
        #expect(result.stderr.contains("savingsd"))
    }

    @Test func findsTheSocketThroughTheEnvironmentAndUserPaths() throws {
        let daemon = try DaemonProcess()
        let viaEnvironment = try runCtl(["status", "--json"], environment: ["SAVINGSD_SOCKET": daemon.socketPath])
        #expect(viaEnvironment.status == 0)
        #expect(try JSONParser.parse(viaEnvironment.stdout)["socket"] == .string(daemon.socketPath))

        let directory = try makeScratchDirectory()
        let userDaemon = try DaemonProcess(directory: directory, arguments: [])
        let viaUserPath = try runCtl(["status", "--json"], environment: ["XDG_RUNTIME_DIR": directory + "/run"])
        #expect(viaUserPath.status == 0)
        #expect(try JSONParser.parse(viaUserPath.stdout)["pid"] == .int(Int(userDaemon.pid)))
    }

    /// `savingsctl call` and `--version` skip ArgumentParser when the command line is plain; a
    /// `--` sends the same request through ArgumentParser. Both must print and exit alike.
    @Test func theShortPathOfCallMatchesArgumentParser() throws {
        let daemon = try DaemonProcess()
        let socket = ["--socket", daemon.socketPath]
        _ = try ok(socket, ["goal", "add", "Emergency", "--target", "5000", "--currency", "EUR", "--deadline", "2027-06-30"])
        let nowhere = ["--socket", try makeScratchDirectory() + "/none.sock"]
        let pairs: [(short: [String], parsed: [String], status: Int32)] = [
            (socket + ["call", "goal.get", "goal=Emergency"], socket + ["call", "--", "goal.get", "goal=Emergency"], 0),
            (["--timeout=5", "call", "goal.get", #"{"goal":"Emergency"}"#, "--json", "--socket=" + daemon.socketPath],
             ["call", "--json", "--timeout", "5"] + socket + ["--", "goal.get", #"{"goal":"Emergency"}"#], 0),
            (socket + ["call", "goal.get", "goal=Nope"], socket + ["call", "--", "goal.get", "goal=Nope"], 1),
            (socket + ["call", "goal.get", "not-a-pair"], socket + ["call", "--", "goal.get", "not-a-pair"], 2),
            (socket + ["call", "goal.get", "{bad"], socket + ["call", "--", "goal.get", "{bad"], 2),
            (nowhere + ["call", "daemon.ping"], nowhere + ["call", "--", "daemon.ping"], 3),
        ]
        for (short, parsed, status) in pairs {
            let fast = try runCtl(short), full = try runCtl(parsed)
            #expect(fast.status == status, "\(short): \(fast.stderr)")
            #expect(full.status == status, "\(parsed): \(full.stderr)")
            #expect(fast.stdout == full.stdout, "\(short)")
            #expect(fast.stderr == full.stderr, "\(short)")
        }
        let viaEnvironment = try runCtl(["call", "daemon.ping"], environment: ["SAVINGSD_SOCKET": daemon.socketPath])
        #expect(viaEnvironment.status == 0)
        #expect(try JSONParser.parse(viaEnvironment.stdout)["pong"] == true)

        // What the short path does not take is ArgumentParser's to answer.
        let version = try runCtl(["--version"])
        #expect(version.status == 0 && version.stdout == "0.1.0\n")
        #expect(try runCtl(socket + ["call"]).status == 2)
        let badTimeout = try runCtl(socket + ["--timeout", "0", "call", "daemon.ping"])
        #expect(badTimeout.status == 2 && badTimeout.stderr.contains("--timeout takes seconds"))
        let help = try runCtl(["call", "--help"])
        #expect(help.status == 0 && help.stdout.contains("Call any method"))
    }
}

/// Runs savingsctl against `socket` and expects success; returns its output.
func ok(_ socket: [String], _ arguments: [String]) throws -> String {
    let result = try runCtl(socket + arguments)
    #expect(result.status == 0, "\(arguments): \(result.stderr)")
    return result.stdout
}
