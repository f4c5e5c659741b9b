import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `savingsctl web`: the app's screens in a browser, served on loopback as the invoking user.
/// The server is `savings-web`, beside savingsctl (or in ../lib/savingsd when installed), which
/// this command becomes once the daemon answers: savingsctl itself carries no HTTP server.
struct WebCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Show the app's screens in a browser, updating as things change.",
        discussion: """
            Serves on loopback and prints one line, the URL to open. Its token signs a browser in for as
            long as this server runs (the same link works again, in another browser too): keep it as
            private as a password. Talks to savingsd over its socket as you, so the daemon's access rules
            apply. Ctrl-C stops it.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Where to listen, on loopback (port 0: a free one).", valueName: "host:port")) var listen = "127.0.0.1:0"
    @Flag(help: "Open the desktop browser on it (xdg-open).") var open = false

    func run() throws {
        let server = try Self.server()
        // The daemon must answer now; the page follows it if it restarts later.
        var reached: String?
        var lastFailure: ClientFailure?
        for path in ClientSession.socketCandidates(explicit: global.socket, environment: ProcessInfo.processInfo.environment) {
            do {
                _ = try ClientSession(socket: path, json: false, timeout: global.timeout).call("daemon.ping")
                reached = path
                break
            } catch let failure as ClientFailure {
                lastFailure = failure
            }
        }
        guard let reached else { throw lastFailure ?? ClientFailure(message: "no socket to reach savingsd", exitCode: 3) }
        var arguments = [server, "--socket", reached, "--listen", listen]
        if open { arguments.append("--open") }
        let argv = arguments.map { strdup($0) } + [nil]
        execv(server, argv)
        throw ClientFailure(message: "cannot run \(server): \(String(cString: strerror(errno)))", exitCode: 1)
    }

    /// Where `savings-web` is: beside this savingsctl, or in ../lib/savingsd.
    static func server() throws -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let directory = (me as NSString).deletingLastPathComponent
        let candidates = [directory + "/savings-web", (directory as NSString).deletingLastPathComponent + "/lib/savingsd/savings-web"]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw ClientFailure(message: "savings-web, which serves the web view, is not installed (looked for \(candidates.joined(separator: " and ")))",
                                exitCode: 1)
        }
        return found
    }
}
