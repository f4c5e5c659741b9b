import ArgumentParser

struct Savingsctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "savingsctl",
        abstract: "Talk to savingsd, the savings-goal daemon.",
        discussion: """
            The socket is found by --socket, $SAVINGSD_SOCKET, the user-mode path, then the system path.
            Exit codes: 0 ok, 1 the daemon returned an error, 2 usage, 3 cannot reach the daemon.
            """,
        version: "0.1.0",
        subcommands: [
            StatusCommand.self, DashboardCommand.self, GoalCommand.self, ContributeCommand.self, UndoContributionCommand.self,
            AssetCommand.self, TxCommand.self, AllocCommand.self, RatesCommand.self, PlanCommand.self, MonthCommand.self, EventsCommand.self,
            BackupCommand.self, CheckCommand.self, ExportCommand.self, ImportCommand.self, LegacyImportCommand.self, CallCommand.self,
        ])

    @OptionGroup var global: GlobalOptions
}

/// Options every command accepts, before or after the subcommand name.
struct GlobalOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The daemon's socket.", valueName: "path"))
    var socket: String?

    @Flag(help: "Print the raw JSON result.")
    var json = false
}
