import Foundation
import SavingsCore
import SavingsCLI
import SavingsRPC

/// A failure that ends savingsctl with a specific exit code.
struct ClientFailure: Error, CustomStringConvertible {
    var message: String
    var exitCode: Int32
    var description: String { message }

    static func usage(_ message: String) -> ClientFailure { ClientFailure(message: message, exitCode: 2) }
}

/// One connection to the daemon for one command. No business logic: send, receive, print.
struct ClientSession {
    let client: RPCClient
    let json: Bool

    /// Longest silence accepted from the daemon, in milliseconds (`--timeout`).
    let silence: Int32

    init(_ options: GlobalOptions) throws {
        try self.init(socket: options.socket, json: options.json, timeout: options.timeout)
    }

    init(socket: String?, json: Bool, timeout: Double) throws {
        let candidates = Self.socketCandidates(explicit: socket, environment: ProcessInfo.processInfo.environment)
        var lastFailure: (path: String, failure: LineClient.Failure)?
        for path in candidates {
            do {
                client = try RPCClient(socketPath: path)
                self.json = json
                silence = Int32(clamping: Int((timeout * 1000).rounded()))
                return
            } catch {
                lastFailure = (path, error)
            }
        }
        throw ClientFailure(message: Self.unreachable(lastFailure), exitCode: 3)
    }

    /// Why no socket could be reached, and what to do: join the socket's group when its
    /// permissions refused us, else start the daemon or point at its socket.
    static func unreachable(_ last: (path: String, failure: LineClient.Failure)?) -> String {
        guard let (path, failure) = last else { return "cannot reach savingsd (no socket)." }
        if failure.code == EACCES || failure.code == EPERM {
            let user = getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? String(getuid())
            if let group = sharingGroup(of: path) {
                return """
                    cannot reach savingsd: permission denied on \(path).
                    The socket admits members of the group '\(group)'. Ask an administrator to add you \
                    (sudo usermod -aG \(group) \(user)), then log in again (or run: newgrp \(group)).
                    """
            }
            return """
                cannot reach savingsd: permission denied on \(path).
                Only its owner may connect; an administrator can share it with a group (README, "Sharing with other users").
                """
        }
        return """
            cannot reach savingsd (\(failure.message)).
            Start it with `savingsd` (or `systemctl --user start savingsd`), or point --socket / SAVINGSD_SOCKET at its socket.
            """
    }

    /// `--socket`, `$SAVINGSD_SOCKET`, then the user-mode and system paths that exist.
    /// The environment is read only without --socket (reading it is a noticeable part of a short call).
    static func socketCandidates(explicit: String?, environment readEnvironment: @autoclosure () -> [String: String]) -> [String] {
        if let explicit { return [explicit] }
        let environment = readEnvironment()
        if let fromEnvironment = environment["SAVINGSD_SOCKET"], !fromEnvironment.isEmpty { return [fromEnvironment] }
        let user = DefaultPaths.user(environment: environment, uid: getuid()).socket
        let system = DefaultPaths.system.socket
        let existing = [user, system].filter { FileManager.default.fileExists(atPath: $0) }
        return existing.isEmpty ? [user] : existing
    }

    /// The group that the socket (or, when we may not even look inside, its directory) grants
    /// access to: not root's, and with the group's permission bits set.
    static func sharingGroup(of path: String) -> String? {
        for candidate in [path, String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])] where !candidate.isEmpty {
            var info = stat()
            guard stat(candidate, &info) == 0 else { continue }
            guard info.st_gid != 0, info.st_mode & 0o070 != 0 else { return nil }
            return getgrgid(info.st_gid).map { String(cString: $0.pointee.gr_name) }
        }
        return nil
    }

    /// Methods that may run longer than the silence bound (minutes on large data; a rate refresh
    /// waits up to 20 s per provider): they are always asked for progress, so the daemon is heard
    /// from every few seconds (silence still means trouble), and may take up to an hour in all.
    static let longRunning: Set<String> = ["tx.import", "data.import", "data.export", "data.legacy_import", "db.backup", "db.check",
                                           "rates.refresh", "asset.sync"]
    static let longRunningDeadline = 3_600_000

    func call(_ method: String, _ params: [String: JSONValue] = [:], onNotification: ((JSONValue) -> Void)? = nil) throws -> JSONValue {
        let long = Self.longRunning.contains(method)
        do {
            return try client.call(method, long ? params.merging(["progress": true]) { old, _ in old } : params,
                                   timeoutMilliseconds: silence, deadlineMilliseconds: long ? Self.longRunningDeadline : nil,
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
        case .transport(let failure) where failure.timedOut:
            return ClientFailure(message: """
                savingsd accepted the connection but did not answer \(method) (\(failure.message)).
                It may be failing to start or stuck: see systemctl status savingsd and journalctl -u savingsd \
                (add --user for a per-user daemon); --timeout waits longer.
                """, exitCode: 3)
        case .transport(let failure):
            return ClientFailure(message: "lost the connection to savingsd: \(failure.message)\n"
                                 + "Check it is still running (savingsctl status; journalctl --user -u savingsd) and try again.", exitCode: 3)
        case .local(let reason):
            return ClientFailure(message: reason, exitCode: 1)
        case .malformed(let reason):
            return ClientFailure(message: reason + "\nThis savingsctl may not match the daemon's version (savingsctl --version; savingsctl status).",
                                 exitCode: 1)
        }
    }

    /// The result, or nil when the daemon answers `not_found` (a month not started yet).
    func callIfFound(_ method: String, _ params: [String: JSONValue] = [:]) throws -> JSONValue? {
        do {
            return try client.call(method, params, timeoutMilliseconds: silence)
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
