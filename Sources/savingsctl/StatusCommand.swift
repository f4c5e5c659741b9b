import ArgumentParser
import SavingsCLI
import SavingsRPC

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show the daemon's status.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let session = try ClientSession(global)
        let status = try session.call("daemon.status")
        session.output(status) { status in
            let counts = status["counts"]?.objectValue ?? [:]
            let lines: [(String, String)] = [
                ("version", status["version"]?.stringValue ?? "-"),
                ("pid", status["pid"].map(JSONSerializer.serialize) ?? "-"),
                ("uptime", (status["uptime_seconds"].map(JSONSerializer.serialize) ?? "-") + " s"),
                ("mode", status["mode"]?.stringValue ?? "-"),
                ("database", status["database"]?.stringValue ?? "-"),
                ("socket", status["socket"]?.stringValue ?? "-"),
                ("schema", status["schema_version"].map(JSONSerializer.serialize) ?? "-"),
                ("counts", counts.keys.sorted().map { "\($0)=\(JSONSerializer.serialize(counts[$0]!))" }.joined(separator: " ")),
            ]
            return lines.map { $0.0.padding(toLength: 10, withPad: " ", startingAt: 0) + $0.1 }.joined(separator: "\n")
        }
    }
}
