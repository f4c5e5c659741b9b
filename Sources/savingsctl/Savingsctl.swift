import ArgumentParser
import SavingsCLI
import SavingsRPC

struct Savingsctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "savingsctl",
        abstract: "Talk to savingsd, the savings-goal daemon.",
        discussion: """
            The socket is found by --socket, $SAVINGSD_SOCKET, the user-mode path, then the system path.
            Exit codes: 0 ok, 1 the daemon returned an error, 2 usage, 3 cannot reach the daemon.
            """,
        version: version,
        subcommands: [
            StatusCommand.self, DashboardCommand.self, GoalCommand.self, ContributeCommand.self, UndoContributionCommand.self,
            AssetCommand.self, TxCommand.self, AllocCommand.self, RatesCommand.self, PlanCommand.self, MonthCommand.self, EventsCommand.self,
            BackupCommand.self, CheckCommand.self, ExportCommand.self, ImportCommand.self, LegacyImportCommand.self, DemoCommand.self, ReportCommand.self,
            CallCommand.self, WebCommand.self,
        ])

    static let version = "0.1.0"

    @OptionGroup var global: GlobalOptions

    /// No subcommand: this month at a glance.
    func run() throws {
        let session: ClientSession
        do {
            session = try ClientSession(global)
        } catch let failure as ClientFailure {
            print(Savingsctl.helpMessage())
            throw failure
        }
        let dashboard = try session.call("dashboard.get")
        let plans = try session.call("plan.list")
        let month = try session.callIfFound("month.progress")
        if global.json {
            print(JSONSerializer.pretty(["dashboard": dashboard, "plans": plans, "month": month ?? .null]))
        } else {
            print(Views.overview(dashboard: dashboard, month: month, plans: plans, style: .standardOutput))
        }
    }
}

/// Options every command accepts, before or after the subcommand name.
struct GlobalOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The daemon's socket.", valueName: "path"))
    var socket: String?

    @Flag(help: "Print the raw JSON result.")
    var json = false

    @Option(help: ArgumentHelp("Give up when the daemon stays silent this long (long imports and backups report progress meanwhile).",
                               valueName: "seconds"))
    var timeout: Double = Self.defaultTimeout

    static let defaultTimeout: Double = 10

    func validate() throws {
        guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout takes seconds, more than 0 and at most 86400") }
    }
}
