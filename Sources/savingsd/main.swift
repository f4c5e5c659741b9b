import ArgumentParser
import SavingsDaemon

@main
struct Savingsd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "savingsd",
        abstract: "The savings-goal daemon: serves JSON-RPC 2.0 over a Unix socket.",
        discussion: """
            Paths default to systemd's STATE_DIRECTORY/RUNTIME_DIRECTORY/CONFIGURATION_DIRECTORY, \
            else /var/lib/savingsd, /run/savingsd, /etc/savingsd with --system, else the XDG user \
            directories. Precedence: flag > environment > config file > default.
            """,
        version: SavingsDaemonInfo.version)

    @Option(help: ArgumentHelp("Unix socket path (env SAVINGSD_SOCKET, [rpc] socket).", valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp("SQLite database path (env SAVINGSD_DATABASE, [database] path).", valueName: "path"))
    var database: String?

    @Option(help: ArgumentHelp("Configuration file (env SAVINGSD_CONFIG).", valueName: "path"))
    var config: String?

    @Option(name: .customLong("log-level"),
            help: ArgumentHelp("trace, debug, info, notice, warning, error, critical (env SAVINGSD_LOG_LEVEL, log_level).", valueName: "level"))
    var logLevel: String?

    @Flag(help: "Use the system paths (/var/lib/savingsd, /run/savingsd, /etc/savingsd).")
    var system = false

    @Flag(name: .customLong("check-config"), help: "Validate the configuration, print the effective values and exit (0 valid, 1 invalid).")
    var checkConfig = false

    mutating func run() async throws {
        let options = DaemonOptions(socket: socket, database: database, config: config, logLevel: logLevel, system: system)
        let code = checkConfig ? Daemon.checkConfig(options: options) : await Daemon.run(options: options)
        if code != 0 { throw ExitCode(code) }
    }
}
