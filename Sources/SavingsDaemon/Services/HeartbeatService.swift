import Foundation
import Logging
import SavingsRPC
import SavingsStore
import ServiceLifecycle

/// Proves liveness through the real serving path: a `daemon.ping` over the daemon's own socket
/// (accept, decode, dispatch, answer on the event loops) and a database read. Only when both
/// answer does it ping systemd's watchdog (at half of `WatchdogSec`), so a stuck event loop or
/// a hung database stops the pings and systemd restarts the daemon. It also refreshes `STATUS=`.
struct HeartbeatService: Service {
    let database: SavingsDatabase
    let notifier: SystemdNotifier
    let logger: Logger
    let interval: Duration
    let watchdogEnabled: Bool
    /// Whether a request over the socket is answered.
    let probe: @Sendable () async -> Bool

    init(database: SavingsDatabase, notifier: SystemdNotifier, logger: Logger, probe: @escaping @Sendable () async -> Bool) {
        self.database = database
        self.notifier = notifier
        self.logger = logger
        self.probe = probe
        if let watchdog = notifier.watchdogInterval() {
            self.interval = watchdog / 2
            self.watchdogEnabled = true
        } else {
            self.interval = .seconds(60)
            self.watchdogEnabled = false
        }
    }

    func run() async throws {
        if watchdogEnabled { logger.info("systemd watchdog enabled", metadata: ["ping_interval": "\(interval)"]) }
        await cancelWhenGracefulShutdown { await beat() }
    }

    private func beat() async {
        while !Task.isCancelled {
            do {
                try await Pause.sleep(for: interval)
            } catch {
                return
            }
            do {
                try await database.ping()
                guard await probe() else {
                    logger.error("health check failed: the socket did not answer daemon.ping")
                    continue
                }
                if watchdogEnabled { notifier.watchdog() }
                notifier.status(try await Self.statusLine(database))
            } catch is CancellationError {
                return
            } catch {
                // No watchdog ping: if the database stays unusable systemd restarts us.
                logger.error("health check failed: \(error)")
            }
        }
    }

    /// Sends `daemon.ping` to `socketPath` as a client would; true when an answer comes back
    /// within `timeout` (a "busy" refusal also proves the loop serves).
    static func pingOverSocket(_ socketPath: String, timeoutMilliseconds: Int32 = 5_000) async -> Bool {
        await Task.detached {
            guard let client = try? LineClient(socketPath: socketPath) else { return false }
            defer { client.close() }
            guard (try? client.sendLine(#"{"jsonrpc":"2.0","id":"watchdog","method":"daemon.ping"}"#)) != nil,
                  let line = try? client.readLine(timeoutMilliseconds: timeoutMilliseconds),
                  let answer = try? JSONParser.parse(line) else { return false }
            return answer["id"] != nil
        }.value
    }

    /// "serving 3 goals, rates 2 min old": the STATUS= line.
    static func statusLine(_ database: SavingsDatabase, now: Date = Date()) async throws -> String {
        let goals = try await database.counts()["goals"] ?? 0
        var line = "serving \(goals) goal\(goals == 1 ? "" : "s")"
        if let oldest = try await database.oldestCurrentRate() {
            line += ", rates \(max(0, Int(now.timeIntervalSince(oldest)) / 60)) min old"
        }
        return line
    }
}
