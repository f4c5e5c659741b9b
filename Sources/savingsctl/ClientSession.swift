import Foundation
import SavingsCore
import SavingsCLI
import SavingsRPC

/// A failure that ends savingsctl with a specific exit code.
struct ClientFailure: Error {
    var message: String
    var exitCode: Int32

    static func usage(_ message: String) -> ClientFailure { ClientFailure(message: message, exitCode: 2) }
}

/// One connection to the daemon for one command. No business logic: send, receive, print.
struct ClientSession {
    let client: RPCClient
    let json: Bool

    init(_ options: GlobalOptions) throws {
        let environment = ProcessInfo.processInfo.environment
        let candidates = Self.socketCandidates(explicit: options.socket, environment: environment)
        var lastFailure: LineClient.Failure?
        for path in candidates {
            do {
                client = try RPCClient(socketPath: path)
                json = options.json
                return
            } catch {
                lastFailure = error
            }
        }
        throw ClientFailure(message: """
            cannot reach savingsd (\(lastFailure?.message ?? "no socket")).
            Start it with `savingsd` (or `systemctl --user start savingsd`), or point --socket / SAVINGSD_SOCKET at its socket.
            """, exitCode: 3)
    }

    /// `--socket`, `$SAVINGSD_SOCKET`, then the user-mode and system paths that exist.
    static func socketCandidates(explicit: String?, environment: [String: String]) -> [String] {
        if let explicit { return [explicit] }
        if let fromEnvironment = environment["SAVINGSD_SOCKET"], !fromEnvironment.isEmpty { return [fromEnvironment] }
        let user = DefaultPaths.user(environment: environment, uid: getuid()).socket
        let system = DefaultPaths.system.socket
        let existing = [user, system].filter { FileManager.default.fileExists(atPath: $0) }
        return existing.isEmpty ? [user] : existing
    }

    /// Methods that may run for minutes on large data: wait for them up to an hour.
    static let longRunning: Set<String> = ["tx.import", "data.import", "data.export", "data.legacy_import", "db.backup", "db.check"]

    func call(_ method: String, _ params: [String: JSONValue] = [:], onNotification: ((JSONValue) -> Void)? = nil) throws -> JSONValue {
        do {
            return try client.call(method, params, timeoutMilliseconds: Self.longRunning.contains(method) ? 3_600_000 : 30_000,
                                   onNotification: onNotification)
        } catch {
            throw Self.failure(error, method: method)
        }
    }

    /// What savingsctl says when a call fails: the daemon's message and what to do next.
    static func failure(_ error: RPCClient.CallError, method: String) -> ClientFailure {
        switch error {
        case .remote(let rpcError):
            return ClientFailure(message: Hints.message(for: rpcError, method: method), exitCode: 1)
        case .transport(let failure):
            return ClientFailure(message: "lost the connection to savingsd: \(failure.message)\n"
                                 + "Check it is still running (savingsctl status; journalctl --user -u savingsd) and try again.", exitCode: 3)
        case .malformed(let reason):
            return ClientFailure(message: reason + "\nThis savingsctl may not match the daemon's version (savingsctl --version; savingsctl status).",
                                 exitCode: 1)
        }
    }

    /// The result, or nil when the daemon answers `not_found` (a month not started yet).
    func callIfFound(_ method: String, _ params: [String: JSONValue] = [:]) throws -> JSONValue? {
        do {
            return try client.call(method, params, timeoutMilliseconds: 30_000)
        } catch .remote(let rpcError) where rpcError.kind == "not_found" {
            return nil
        } catch {
            throw Self.failure(error, method: method)
        }
    }

    /// Prints `result` as JSON with --json, else through `human`.
    func output(_ result: JSONValue, human: (JSONValue) -> String) {
        print(json ? JSONSerializer.pretty(result) : human(result))
    }
}
